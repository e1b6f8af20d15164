/* compat_graph.c: the backend (graph) API as OpenVINO's NVIDIA plugin drives it
   (docs/compatibility.md): convolution graphs padded differently before and after (forward, and
   the gradients the same descriptor describes), a plan rebuilt from the kept configuration on
   every execution, the fused convolution whose side input, scaled by ALPHA2 0, has no pointer in
   the variant pack; NVIDIA apex's frontend graphs (an int8 mask, a reduction reading a
   non-virtual output); MXNet's cuDNN v8 ops (MODE_B heuristics, the fallback engines by index,
   a plan cloned onto a new graph through the knob choices read back). Each replays the call
   sequence in C against tests/ref/conv.c. (compat_backend.c: PyTorch, TensorFlow, the frontend,
   hidet.) */
#include "backend_util.h"
#include "conv_harness.h"
#include "ref/conv.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- OpenVINO's NVIDIA plugin (modules/nvidia_plugin/src/ops/convolution_cudnn_be.cpp,
   src/cuda/dnn_be_algo.hpp, src/cuda/dnn_be.hpp) ------------------------------------------------ */

/* A POINTWISE descriptor of a mode, MATH_PREC FLOAT, finalized. */
static bdesc pw_float(cudnnPointwiseMode_t mode)
{
    bdesc p = bt_make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    const cudnnDataType_t f = CUDNN_DATA_FLOAT;
    bt_set(p, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    bt_set(p, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &f);
    CHECK_OK(cudnnBackendFinalize(p));
    return p;
}

/* OpenVINO's side-input ADD: y = x + alpha2 * z (XDESC, BDESC, ALPHA1 1, ALPHA2, YDESC, then the
   pointwise descriptor), finalized. */
static bdesc side_add_op(bdesc pw, bdesc x, bdesc z, float alpha2, bdesc y)
{
    bdesc op = bt_make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, z);
    bt_set_f(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.0f);
    bt_set_f(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, alpha2);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    CHECK_OK(cudnnBackendFinalize(op));
    return op;
}

/* OpenVINO's pointwise op: XDESC, BDESC when given, YDESC, then the pointwise descriptor,
   finalized. */
static bdesc ov_pw_op(bdesc pw, bdesc x, bdesc b, bdesc y)
{
    bdesc op = bt_make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b) bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    CHECK_OK(cudnnBackendFinalize(op));
    return op;
}

/* ConvolutionCuDnnBE: the ONNX / OpenVINO pads as they are, **PRE_PADDINGS and POST_PADDINGS
   different** (pads_begin, pads_end), 2-D or 3-D; packed row-major x, w, y (UIDs 'x', 'w', 'y',
   not virtual, one byte alignment), COMP_TYPE the element type, ALPHA 1 and BETA 0 as DOUBLE for
   double and FLOAT otherwise; getAllExecutionPlansFromHeuristics: INSTANT's configurations
   (counted, then fetched), a plan built from each, failures skipped; the first plan's
   configuration and workspace kept; performBenchmarks (opBenchOption): every plan whose
   workspace fits the largest executed with that workspace; Execute: **a new plan built from the
   kept configuration on every call**, the workspace NULL when its size is 0. The input is
   convolved as if zero-padded by pads_begin before and pads_end after. */
TEST(compat_backend_openvino_asymmetric_pads)
{
    static const struct { cudnnDataType_t t; int nsp; int64_t pre[3], post[3], stride[3], dil[3]; } cases[] = {
        {CUDNN_DATA_FLOAT, 2, {1, 0}, {2, 1}, {2, 1}, {1, 1}},
        {CUDNN_DATA_HALF, 2, {0, 2}, {1, 0}, {1, 2}, {1, 2}},
        {CUDNN_DATA_DOUBLE, 3, {1, 0, 2}, {0, 1, 1}, {1, 2, 1}, {1, 1, 1}},
    };
    const int64_t uids[3] = {'x', 'w', 'y'};
    for (size_t k = 0; k < TLEN(cases); k++) {
        const cudnnDataType_t t = cases[k].t;
        const int nsp = cases[k].nsp, rank = nsp + 2;
        const bool dbl = t == CUDNN_DATA_DOUBLE;
        /* the reference: the zero-padded input, convolved without padding */
        struct ref_conv rc = {.nsp = nsp, .n = 2, .c = 3, .k = 4, .groups = 1};
        const int in[3] = {7, 6, 5}, filt[3] = {3, 2, 2};
        int xd[5] = {rc.n, rc.c}, pd[5] = {rc.n, rc.c}, wd[5] = {rc.k, rc.c}, yd[5] = {rc.n, rc.k};
        for (int d = 0; d < nsp; d++) {
            rc.in[d] = in[d] + (int)(cases[k].pre[d] + cases[k].post[d]), rc.filt[d] = filt[d], rc.pad[d] = 0;
            rc.stride[d] = (int)cases[k].stride[d], rc.dil[d] = (int)cases[k].dil[d];
            xd[2 + d] = in[d], pd[2 + d] = rc.in[d], wd[2 + d] = filt[d];
        }
        if (!CHECK(ref_conv_out_dims(&rc))) continue;
        for (int d = 0; d < nsp; d++) yd[2 + d] = rc.out[d];
        struct tview v[3];
        tview_init(&v[0], t, rank, xd, TV_NCHW);
        tview_init(&v[1], t, rank, wd, TV_NCHW);
        tview_init(&v[2], t, rank, yd, TV_NCHW);
        double *x = tview_random(v[0].count, -1, 1), *w = tview_random(v[1].count, -1, 1);
        void *ptrs[3] = {tview_upload(&v[0], x), tview_upload(&v[1], w), tview_upload(&v[2], NULL)};
        long np = 1;
        for (int d = 0; d < rank; d++) np *= pd[d];
        double *xp = calloc((size_t)np, sizeof(double)), *want = malloc(sizeof(double) * (size_t)v[2].count);
        for (long i = 0; i < v[0].count; i++) { /* element i of x at its place in the padded input */
            long rem = i, off = 0, scale = 1, idx[5];
            for (int d = rank - 1; d >= 0; d--) idx[d] = rem % xd[d], rem /= xd[d];
            for (int d = rank - 1; d >= 0; d--) {
                off += (idx[d] + (d >= 2 ? cases[k].pre[d - 2] : 0)) * scale;
                scale *= pd[d];
            }
            xp[off] = x[i];
        }
        ref_conv_fwd(&rc, xp, w, want);
        bdesc td[3];
        for (int i = 0; i < 3; i++) td[i] = bt_tensor_aligned(uids[i], &v[i], NULL, 16);
        bdesc cd = bt_conv_desc_full(CUDNN_CROSS_CORRELATION, t, nsp, cases[k].pre, cases[k].post, cases[k].stride,
                                     cases[k].dil);
        bdesc op = bt_conv_fwd_op_typed(td, cd, t);
        bdesc g = bt_graph(&op, 1);
        bdesc cfgs[16], plans[16];
        const int ncfg = bt_heuristics(g, cfgs, 16);
        int nplans = 0;
        int64_t ws[16], max_ws = 0;
        bdesc kept = NULL;
        for (int i = 0; i < ncfg; i++) {
            bdesc p = bt_plan_of_cfg(cfgs[i], &ws[nplans]);
            if (!p) continue;
            if (!kept) kept = cfgs[i];
            if (ws[nplans] > max_ws) max_ws = ws[nplans];
            plans[nplans++] = p;
        }
        const double tol = dbl ? 1e-10 : bt_graph_tol(t);
        if (CHECK(nplans > 0)) {
            /* performBenchmarks: every plan with the largest workspace */
            void *big = max_ws > 0 ? tbuf_alloc((size_t)max_ws) : NULL;
            for (int i = 0; i < nplans; i++) {
                tbuf_poison(ptrs[2], tview_bytes(&v[2]));
                if (CHECK_OK(bt_execute(plans[i], uids, ptrs, 3, big)))
                    bt_check_tol(&v[2], ptrs[2], want, tol, "OpenVINO's benchmarked plan");
            }
            tbuf_free(big);
            /* Execute: a fresh plan from the kept configuration, twice */
            for (int rep = 0; rep < 2; rep++) {
                int64_t kws = -1;
                bdesc p = bt_plan_of_cfg(kept, &kws);
                if (!CHECK(p != NULL)) break;
                tbuf_poison(ptrs[2], tview_bytes(&v[2]));
                if (CHECK_OK(bt_run(p, kws, uids, ptrs, 3)))
                    bt_check_tol(&v[2], ptrs[2], want, tol, "OpenVINO's Execute, asymmetric pads");
                cudnnBackendDestroyDescriptor(p);
            }
        }
        for (int i = 0; i < nplans; i++) cudnnBackendDestroyDescriptor(plans[i]);
        bt_destroy_all(cfgs, ncfg);
        bt_destroy_all((bdesc[]){g, op, cd, td[0], td[1], td[2]}, 6);
        for (int i = 0; i < 3; i++) tview_free(&v[i], ptrs[i]), tview_destroy(&v[i]);
        free(x), free(w), free(xp), free(want);
    }
}

/* The other directions of an asymmetrically padded convolution (pre and post paddings
   different), which no caller read sends but the same descriptor describes: the data gradient
   blended into dx by beta (the padded positions dropped), the filter gradient over the
   zero-padded input; NCHW and channels-last tensors, engine 0. */
TEST(compat_backend_asymmetric_pads_gradients)
{
    static const int layouts[] = {TV_NCHW, TV_NHWC};
    const int64_t pre[2] = {1, 0}, post[2] = {0, 2}, stride[2] = {2, 1}, dil[2] = {1, 1};
    const int64_t uids[3] = {'x', 'w', 'y'};
    for (size_t k = 0; k < TLEN(layouts); k++) {
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 3, .k = 4, .groups = 1, .in = {8, 5}, .filt = {3, 2},
                              .pad = {0, 0}, .stride = {2, 1}, .dil = {1, 1}};
        const int xd[4] = {rc.n, rc.c, rc.in[0], rc.in[1]};
        const int ph = rc.in[0] + 1, pw = rc.in[1] + 2;
        rc.in[0] = ph, rc.in[1] = pw;
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        const int wd[4] = {rc.k, rc.c, 3, 2}, yd[4] = {rc.n, rc.k, rc.out[0], rc.out[1]};
        struct tview v[3];
        tview_init(&v[0], CUDNN_DATA_FLOAT, 4, xd, layouts[k]);
        tview_init(&v[1], CUDNN_DATA_FLOAT, 4, wd, TV_NCHW);
        tview_init(&v[2], CUDNN_DATA_FLOAT, 4, yd, layouts[k]);
        double *x = tview_random(v[0].count, -1, 1), *w = tview_random(v[1].count, -1, 1);
        double *dy = tview_random(v[2].count, -1, 1), *dx0 = tview_random(v[0].count, -1, 1);
        const long np = (long)rc.n * rc.c * ph * pw;
        double *xp = calloc((size_t)np, sizeof(double)), *dxp = malloc(sizeof(double) * (size_t)np);
        double *dx = malloc(sizeof(double) * (size_t)v[0].count), *dw = malloc(sizeof(double) * (size_t)v[1].count);
        void *px = tview_upload(&v[0], x), *pw_ = tview_upload(&v[1], w), *pdy = tview_upload(&v[2], dy);
        void *pdx = tview_upload(&v[0], dx0), *pdw = tview_upload(&v[1], NULL);
        for (long i = 0; i < v[0].count; i++) { /* NCHW logical order */
            const long wi = i % xd[3], hi = i / xd[3] % xd[2], nc = i / ((long)xd[2] * xd[3]);
            xp[(nc * ph + hi + pre[0]) * pw + wi + pre[1]] = x[i];
        }
        ref_conv_bwd_data(&rc, dy, w, dxp);
        ref_conv_bwd_filter(&rc, xp, dy, dw);
        for (long i = 0; i < v[0].count; i++) {
            const long wi = i % xd[3], hi = i / xd[3] % xd[2], nc = i / ((long)xd[2] * xd[3]);
            dx[i] = 0.75 * dxp[(nc * ph + hi + pre[0]) * pw + wi + pre[1]] + 0.5 * dx0[i];
        }
        bdesc td[3];
        for (int i = 0; i < 3; i++) td[i] = bt_tensor_aligned(uids[i], &v[i], NULL, 16);
        bdesc cd = bt_conv_desc_full(CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT, 2, pre, post, stride, dil);
        for (int dgrad = 1; dgrad >= 0; dgrad--) {
            bdesc op = bt_make(dgrad ? CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR
                                     : CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
            bt_set_desc(op, dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
                        td[0]);
            bt_set_desc(op, dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
                        td[1]);
            bt_set_desc(op, dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
                        td[2]);
            bt_set_desc(op, dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC
                                  : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, cd);
            bt_set_f(op, dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
                     dgrad ? 0.75f : 1.0f);
            bt_set_f(op, dgrad ? CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
                     dgrad ? 0.5f : 0.0f);
            CHECK_OK(cudnnBackendFinalize(op));
            bdesc g = bt_graph(&op, 1);
            int64_t ws = -1;
            bdesc plan = bt_plan_of_engine(g, 0, &ws);
            if (CHECK(plan != NULL)) {
                void *ptrs[3] = {dgrad ? pdx : px, dgrad ? pw_ : pdw, pdy};
                if (CHECK_OK(bt_run(plan, ws, uids, ptrs, 3))) {
                    /* a graph has no math type: its float engines may run on TF32 */
                    const double tol = tconv_tolerance(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH);
                    if (dgrad) bt_check_tol(&v[0], pdx, dx, tol, "asymmetric pads: dx blended by beta");
                    else bt_check_tol(&v[1], pdw, dw, tol, "asymmetric pads: dw over the zero-padded x");
                }
                cudnnBackendDestroyDescriptor(plan);
            }
            bt_destroy_all((bdesc[]){g, op}, 2);
        }
        bt_destroy_all((bdesc[]){cd, td[0], td[1], td[2]}, 4);
        tview_free(&v[0], px), tview_free(&v[1], pw_), tview_free(&v[2], pdy), tview_free(&v[0], pdx);
        tview_free(&v[1], pdw);
        for (int i = 0; i < 3; i++) tview_destroy(&v[i]);
        free(x), free(w), free(dy), free(dx0), free(xp), free(dxp), free(dx), free(dw);
    }
}

/* FusedConvolutionCuDnnBE (modules/nvidia_plugin/src/ops/fused_convolution_cudnn_be.cpp): conv ->
   'C' (virtual) -> ADD with B the add input 'z' (ALPHA1 1, ALPHA2 1), or, **without an add input,
   B a non-virtual 'z' of the output's shape under ALPHA2 0 whose pointer the variant pack gives
   as NULL** (the benchmark's pack leaves 'z' out altogether) -> 'A' (virtual) -> ADD of the bias
   'b' -> 'B' (virtual) -> RELU_FWD (PROPAGATE_NAN, lower clip 0, upper clip FLT_MAX, lower clip
   slope 0, **BDESC set to its own X**) -> 'y'; pre and post paddings as the op gives them, packed
   NCHW tensors of BYTE_ALIGNMENT 16, math precision and scaling types FLOAT (DOUBLE for double);
   plans from INSTANT's configurations, the first kept, a new plan built from its configuration
   on every Execute. */
TEST(compat_backend_openvino_fused_conv_null_side_input)
{
    static const struct { bool add; bool asym; } cases[] = {{false, false}, {true, true}, {false, true}};
    const int64_t uids[5] = {'x', 'w', 'y', 'b', 'z'};
    for (size_t k = 0; k < TLEN(cases); k++) {
        const int64_t pre[2] = {1, 1}, post[2] = {cases[k].asym ? 0 : 1, cases[k].asym ? 2 : 1};
        const int64_t stride[2] = {1, 1}, dil[2] = {1, 1};
        struct ref_conv rc = {.nsp = 2, .n = 2, .c = 3, .k = 4, .groups = 1, .in = {6 + 1 + (int)post[0], 5 + 1 + (int)post[1]},
                              .filt = {3, 3}, .pad = {0, 0}, .stride = {1, 1}, .dil = {1, 1}};
        if (!CHECK(ref_conv_out_dims(&rc))) return;
        const int xd[4] = {rc.n, rc.c, 6, 5}, wd[4] = {rc.k, rc.c, 3, 3}, yd[4] = {rc.n, rc.k, rc.out[0], rc.out[1]};
        const int bd[4] = {1, rc.k, 1, 1};
        struct tview vx, vw, vy, vb;
        tview_init(&vx, CUDNN_DATA_FLOAT, 4, xd, TV_NCHW);
        tview_init(&vw, CUDNN_DATA_FLOAT, 4, wd, TV_NCHW);
        tview_init(&vy, CUDNN_DATA_FLOAT, 4, yd, TV_NCHW);
        tview_init(&vb, CUDNN_DATA_FLOAT, 4, bd, TV_NCHW);
        double *x = tview_random(vx.count, -1, 1), *w = tview_random(vw.count, -1, 1);
        double *bias = tview_random(vb.count, -0.5, 0.5), *z = tview_random(vy.count, -1, 1);
        void *px = tview_upload(&vx, x), *pw = tview_upload(&vw, w), *pb = tview_upload(&vb, bias);
        void *py = tview_upload(&vy, NULL), *pz = cases[k].add ? tview_upload(&vy, z) : NULL;
        const long np = (long)rc.n * rc.c * rc.in[0] * rc.in[1];
        double *xp = calloc((size_t)np, sizeof(double)), *want = malloc(sizeof(double) * (size_t)vy.count);
        for (long i = 0; i < vx.count; i++) {
            const long wi = i % 5, hi = i / 5 % 6, nc = i / 30;
            xp[(nc * rc.in[0] + hi + pre[0]) * rc.in[1] + wi + pre[1]] = x[i];
        }
        ref_conv_fwd(&rc, xp, w, want);
        const long per = (long)rc.out[0] * rc.out[1];
        for (long i = 0; i < vy.count; i++) {
            const double v = want[i] + (cases[k].add ? z[i] : 0) + bias[i / per % rc.k];
            want[i] = v > 0 ? v : 0;
        }
        bdesc tx = bt_tensor('x', &vx, false), tw = bt_tensor('w', &vw, false), ty = bt_tensor('y', &vy, false);
        bdesc tb = bt_tensor('b', &vb, false), tz = bt_tensor('z', &vy, false);
        bdesc tC = bt_tensor('C', &vy, true), tA = bt_tensor('A', &vy, true), tB = bt_tensor('B', &vy, true);
        const cudnnDataType_t f = CUDNN_DATA_FLOAT;
        bdesc cd = bt_conv_desc_full(CUDNN_CROSS_CORRELATION, f, 2, pre, post, stride, dil);
        bdesc conv = bt_make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
        bt_set_desc(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, tx);
        bt_set_desc(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, tw);
        bt_set_desc(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, tC);
        bt_set_f(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, 1.0f);
        bt_set_f(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, 0.0f);
        bt_set_desc(conv, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, cd);
        CHECK_OK(cudnnBackendFinalize(conv));
        /* the pointwise descriptors */
        bdesc add_pw = pw_float(CUDNN_POINTWISE_ADD), relu_pw = bt_make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
        const cudnnPointwiseMode_t relum = CUDNN_POINTWISE_RELU_FWD;
        const cudnnNanPropagation_t nanp = CUDNN_PROPAGATE_NAN;
        const float lo = 0, hi = FLT_MAX, slope = 0;
        bt_set(relu_pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &relum);
        bt_set(relu_pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &f);
        bt_set(relu_pw, CUDNN_ATTR_POINTWISE_NAN_PROPAGATION, CUDNN_TYPE_NAN_PROPOGATION, 1, &nanp);
        bt_set(relu_pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_FLOAT, 1, &lo);
        bt_set(relu_pw, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_FLOAT, 1, &hi);
        bt_set(relu_pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_FLOAT, 1, &slope);
        CHECK_OK(cudnnBackendFinalize(relu_pw));
        bdesc add = side_add_op(add_pw, tC, tz, cases[k].add ? 1.0f : 0.0f, tA);
        bdesc badd = ov_pw_op(add_pw, tA, tb, tB), relu = ov_pw_op(relu_pw, tB, tB, ty);
        bdesc ops[4] = {conv, add, badd, relu};
        bdesc g = bt_graph(ops, 4);
        bdesc cfgs[16];
        const int ncfg = bt_heuristics(g, cfgs, 16);
        bdesc kept = NULL;
        for (int i = 0; i < ncfg && !kept; i++) {
            int64_t ws = -1;
            bdesc p = bt_plan_of_cfg(cfgs[i], &ws);
            if (p) kept = cfgs[i], cudnnBackendDestroyDescriptor(p);
        }
        if (CHECK(kept != NULL)) {
            for (int pack = 0; pack < 2; pack++) { /* Execute's pack (z NULL without add); the benchmark's (z left out) */
                if (pack == 1 && cases[k].add) break;
                int64_t ws = -1;
                bdesc p = bt_plan_of_cfg(kept, &ws);
                if (!CHECK(p != NULL)) break;
                void *ptrs[5] = {px, pw, py, pb, pz};
                tbuf_poison(py, tview_bytes(&vy));
                if (CHECK_OK(bt_run(p, ws, uids, ptrs, pack ? 4 : 5)))
                    bt_check_tol(&vy, py, want, tconv_tolerance(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH),
                                 cases[k].add ? "OpenVINO's fused conv + add + bias + ReLU"
                                                                   : "OpenVINO's fused conv + bias + ReLU, z NULL under ALPHA2 0");
                cudnnBackendDestroyDescriptor(p);
            }
        }
        bt_destroy_all(cfgs, ncfg);
        bt_destroy_all((bdesc[]){g, relu, badd, add, conv, relu_pw, add_pw, cd, tx, tw, ty, tb, tz, tC, tA, tB}, 16);
        tview_free(&vx, px), tview_free(&vw, pw), tview_free(&vb, pb), tview_free(&vy, py);
        if (pz) tview_free(&vy, pz);
        tview_destroy(&vx), tview_destroy(&vw), tview_destroy(&vy), tview_destroy(&vb);
        free(x), free(w), free(bias), free(z), free(xp), free(want);
    }
}

/* The same side input scaled by 0 and given no pointer where no convolution epilogue absorbs it: a
   pointwise-only graph y = relu(x + 0 * z), z NULL in the pack or left out; the chain reads zeros
   for z (a temporary of the handle's backend). */
TEST(compat_backend_zero_scaled_side_input_absent)
{
    const int d[4] = {2, 3, 4, 5};
    struct tview v;
    tview_init(&v, CUDNN_DATA_FLOAT, 4, d, TV_NCHW);
    double *x = tview_random(v.count, -1, 1), *want = malloc(sizeof(double) * (size_t)v.count);
    for (int64_t i = 0; i < v.count; i++) want[i] = x[i] > 0 ? x[i] : 0;
    void *px = tview_upload(&v, x), *py = tview_upload(&v, NULL);
    bdesc tx = bt_tensor('x', &v, false), tz = bt_tensor('z', &v, false), tA = bt_tensor('A', &v, true);
    bdesc ty = bt_tensor('y', &v, false);
    bdesc add_pw = pw_float(CUDNN_POINTWISE_ADD), relu_pw = pw_float(CUDNN_POINTWISE_RELU_FWD);
    bdesc add = side_add_op(add_pw, tx, tz, 0.0f, tA);
    bdesc relu = ov_pw_op(relu_pw, tA, NULL, ty);
    bdesc ops[2] = {add, relu};
    bdesc g = bt_graph(ops, 2);
    int64_t ws = -1;
    bdesc plan = bt_plan_of_engine(g, 0, &ws);
    if (CHECK(plan != NULL)) {
        const int64_t uids[3] = {'x', 'y', 'z'};
        void *ptrs[3] = {px, py, NULL};
        for (int n = 3; n >= 2; n--) {
            tbuf_poison(py, tview_bytes(&v));
            if (CHECK_OK(bt_run(plan, ws, uids, ptrs, n)))
                bt_check_tol(&v, py, want, 1e-6, n == 3 ? "relu(x + 0 z), z NULL" : "relu(x + 0 z), z not in the pack");
        }
        cudnnBackendDestroyDescriptor(plan);
    }
    bt_destroy_all((bdesc[]){g, relu, add, relu_pw, add_pw, tx, tz, tA, ty}, 9);
    tview_free(&v, px), tview_free(&v, py), tview_destroy(&v);
    free(x), free(want);
}

/* ---- NVIDIA apex (apex/contrib/csrc/conv_bias_relu/conv_bias_relu.cpp) ------------------------- */

/* A tensor of dims in channels-last order (apex's generateStrides with CUDNN_TENSOR_NHWC: a
   {1, K, 1, 1} bias gets {K, 1, K, K}), BYTE_ALIGNMENT 16. */
static bdesc apex_tensor(int64_t uid, cudnnDataType_t t, const int64_t d[4], bool virt)
{
    int64_t st[4];
    st[1] = 1, st[3] = d[1], st[2] = st[3] * d[3], st[0] = st[2] * d[2];
    return bt_tensor_dims(uid, t, 4, d, st, virt);
}

/* A pointwise op: X (or, for RELU_BWD, DY and X) -> Y (DX), B when given. */
static bdesc apex_pw_op(bdesc pw, bdesc x, bdesc b, bdesc y, bdesc dy)
{
    bdesc op = bt_make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b) bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    if (dy) bt_set_desc(op, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, dy);
    bt_set_desc(op, dy ? CUDNN_ATTR_OPERATION_POINTWISE_DXDESC : CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    CHECK_OK(cudnnBackendFinalize(op));
    return op;
}

/* A REDUCTION op of x into y (XDESC, YDESC, then the reduction descriptor), finalized. */
static bdesc apex_reduction_op(bdesc red, bdesc x, bdesc y)
{
    bdesc op = bt_make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
    bt_set_desc(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, red);
    CHECK_OK(cudnnBackendFinalize(op));
    return op;
}

/* getOrCreatePlan: INSTANT's configurations, getEngineConfig(3), the first that builds. */
static bdesc apex_plan(bdesc g, int64_t *ws)
{
    bdesc cfgs[3], plan = NULL;
    const int n = bt_heuristics(g, cfgs, 3);
    for (int i = 0; i < n && !plan; i++) plan = bt_plan_of_cfg(cfgs[i], ws);
    bt_destroy_all(cfgs, n);
    return plan;
}

/* run_conv_bias_mask_relu: half channels-last x and w, conv (FLOAT) -> 'c' FLOAT virtual -> ADD the
   half bias {1, K, 1, 1} -> 'B' -> MUL by an **INT8 mask 'm'** of y's shape -> 'M' -> RELU_FWD ->
   'y' half; run_drelu_dbias: RELU_BWD of dy 'x' at 'r' into a **non-virtual** dx 'R' that a
   REDUCTION ADD (FLOAT) then reads into the float bias gradient 'y' {1, K, 1, 1};
   run_dconv_drelu_dbias: backward data into a virtual FLOAT 'A', RELU_BWD at 'r' into 'R', the
   reduction into 'y'. Math precision FLOAT everywhere, the plan the first of INSTANT's
   configurations that builds (three tried). */
TEST(compat_backend_apex_mask_and_dbias)
{
    const int n = 2, c = 8, k = 8, h = 5, w = 6;
    const int64_t xd[4] = {n, c, h, w}, wd[4] = {k, c, 3, 3}, yd[4] = {n, k, h, w}, bd[4] = {1, k, 1, 1};
    const int64_t pad[2] = {1, 1}, one2[2] = {1, 1};
    const int xi[4] = {n, c, h, w}, wi[4] = {k, c, 3, 3}, yi[4] = {n, k, h, w}, bi[4] = {1, k, 1, 1};
    struct tview vx, vw, vy, vb, vm, vbf;
    tview_init(&vx, CUDNN_DATA_HALF, 4, xi, TV_NHWC);
    tview_init(&vw, CUDNN_DATA_HALF, 4, wi, TV_NHWC);
    tview_init(&vy, CUDNN_DATA_HALF, 4, yi, TV_NHWC);
    tview_init(&vb, CUDNN_DATA_HALF, 4, bi, TV_NCHW);
    tview_init(&vm, CUDNN_DATA_INT8, 4, yi, TV_NHWC);
    tview_init(&vbf, CUDNN_DATA_FLOAT, 4, bi, TV_NCHW);
    struct ref_conv rc = {.nsp = 2, .n = n, .c = c, .k = k, .groups = 1, .in = {h, w}, .filt = {3, 3}, .pad = {1, 1},
                          .stride = {1, 1}, .dil = {1, 1}};
    ref_conv_out_dims(&rc);
    double *x = tview_random(vx.count, -1, 1), *wv = tview_random(vw.count, -1, 1), *b = tview_random(k, -0.5, 0.5);
    double *m = tview_random(vm.count, 0, 1.99), *want = malloc(sizeof(double) * (size_t)vy.count);
    for (int64_t i = 0; i < vm.count; i++) m[i] = (double)(int)m[i];
    void *px = tview_upload(&vx, x), *pw = tview_upload(&vw, wv), *pb = tview_upload(&vb, b), *pm = tview_upload(&vm, m);
    void *py = tview_upload(&vy, NULL);
    ref_conv_fwd(&rc, x, wv, want);
    const long per = (long)h * w;
    for (long i = 0; i < vy.count; i++) {
        const double v = (want[i] + b[i / per % k]) * m[i];
        want[i] = v > 0 ? v : 0;
    }
    cudnnDataType_t f = CUDNN_DATA_FLOAT;
    bdesc tx = apex_tensor('x', CUDNN_DATA_HALF, xd, false), tw = apex_tensor('w', CUDNN_DATA_HALF, wd, false);
    bdesc tc = apex_tensor('c', f, yd, true), tb = apex_tensor('b', CUDNN_DATA_HALF, bd, false);
    bdesc tB = apex_tensor('B', f, yd, true), tm = apex_tensor('m', CUDNN_DATA_INT8, yd, false);
    bdesc tM = apex_tensor('M', f, yd, true), ty = apex_tensor('y', CUDNN_DATA_HALF, yd, false);
    bdesc cd = bt_conv_desc_2d(f, pad, one2, one2);
    bdesc conv = bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, tx, tw, tc, cd);
    bdesc add_pw = pw_float(CUDNN_POINTWISE_ADD), mul_pw = pw_float(CUDNN_POINTWISE_MUL);
    bdesc relu_pw = pw_float(CUDNN_POINTWISE_RELU_FWD), drelu_pw = pw_float(CUDNN_POINTWISE_RELU_BWD);
    bdesc bias_op = apex_pw_op(add_pw, tc, tb, tB, NULL), mask_op = apex_pw_op(mul_pw, tB, tm, tM, NULL);
    bdesc act_op = apex_pw_op(relu_pw, tM, NULL, ty, NULL);
    bdesc ops[4] = {conv, bias_op, mask_op, act_op};
    bdesc g = bt_graph(ops, 4);
    int64_t ws = -1;
    bdesc plan = apex_plan(g, &ws);
    if (CHECK(plan != NULL)) {
        const int64_t uids[5] = {'x', 'w', 'b', 'm', 'y'};
        void *ptrs[5] = {px, pw, pb, pm, py};
        if (CHECK_OK(bt_run(plan, ws, uids, ptrs, 5)))
            bt_check_tol(&vy, py, want, 2e-2, "apex conv + bias, times an int8 mask, ReLU");
        cudnnBackendDestroyDescriptor(plan);
    }
    bt_destroy_all((bdesc[]){g, act_op, mask_op, bias_op, conv}, 5);
    /* drelu_dbias and dconv_drelu_dbias: dy 'x' of y's shape, r the relu output */
    double *dy = tview_random(vy.count, -1, 1), *r = tview_random(vy.count, -1, 1);
    for (int64_t i = 0; i < vy.count; i++) r[i] = r[i] > 0 ? r[i] : 0;
    void *pdy = tview_upload(&vy, dy), *pr = tview_upload(&vy, r), *pR = tview_upload(&vy, NULL);
    void *pdb = tview_upload(&vbf, NULL);
    double *dR = malloc(sizeof(double) * (size_t)vy.count), *db = calloc((size_t)k, sizeof(double));
    for (long i = 0; i < vy.count; i++) dR[i] = r[i] > 0 ? dy[i] : 0, db[i / per % k] += dR[i];
    bdesc tdy = apex_tensor('x', CUDNN_DATA_HALF, yd, false), tr = apex_tensor('r', CUDNN_DATA_HALF, yd, false);
    bdesc tR = apex_tensor('R', CUDNN_DATA_HALF, yd, false), tdb = apex_tensor('y', f, bd, false);
    bdesc red = bt_make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnReduceTensorOp_t add = CUDNN_REDUCE_TENSOR_ADD;
    bt_set(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f);
    bt_set(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &add);
    CHECK_OK(cudnnBackendFinalize(red));
    bdesc drelu = apex_pw_op(drelu_pw, tr, NULL, tR, tdy);
    bdesc rop = apex_reduction_op(red, tR, tdb);
    bdesc ops2[2] = {drelu, rop};
    bdesc g2 = bt_graph(ops2, 2);
    plan = apex_plan(g2, &ws);
    if (CHECK(plan != NULL)) {
        const int64_t uids[4] = {'x', 'r', 'R', 'y'};
        void *ptrs[4] = {pdy, pr, pR, pdb};
        if (CHECK_OK(bt_run(plan, ws, uids, ptrs, 4))) {
            bt_check_tol(&vy, pR, dR, 2e-3, "apex drelu into a non-virtual R");
            bt_check_tol(&vbf, pdb, db, 1e-2, "apex dbias: the reduction of R");
        }
        cudnnBackendDestroyDescriptor(plan);
    }
    /* dconv_drelu_dbias: backward data (dy 'x', w) into a virtual FLOAT 'A' of x's shape, RELU_BWD at
       'r' into 'R', the reduction into 'y' {1, C, 1, 1} */
    double *dA = malloc(sizeof(double) * (size_t)vx.count), *r2 = tview_random(vx.count, -1, 1);
    double *dR2 = malloc(sizeof(double) * (size_t)vx.count), *db2 = calloc((size_t)c, sizeof(double));
    for (int64_t i = 0; i < vx.count; i++) r2[i] = r2[i] > 0 ? r2[i] : 0;
    void *pr2 = tview_upload(&vx, r2), *pR2 = tview_upload(&vx, NULL), *pdb2 = tview_upload(&vbf, NULL);
    ref_conv_bwd_data(&rc, dy, wv, dA);
    for (long i = 0; i < vx.count; i++) dR2[i] = r2[i] > 0 ? dA[i] : 0, db2[i / per % c] += dR2[i];
    bdesc tA = apex_tensor('A', f, xd, true), tr2 = apex_tensor('r', CUDNN_DATA_HALF, xd, false);
    bdesc tR2 = apex_tensor('R', CUDNN_DATA_HALF, xd, false), tdb2 = apex_tensor('y', f, bd, false);
    bdesc dconv = bt_conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, tA, tw, tdy, cd);
    bdesc drelu2 = apex_pw_op(drelu_pw, tr2, NULL, tR2, tA);
    bdesc rop2 = apex_reduction_op(red, tR2, tdb2);
    bdesc ops3[3] = {dconv, drelu2, rop2};
    bdesc g3 = bt_graph(ops3, 3);
    plan = apex_plan(g3, &ws);
    if (CHECK(plan != NULL)) {
        const int64_t uids[5] = {'x', 'w', 'r', 'R', 'y'};
        void *ptrs[5] = {pdy, pw, pr2, pR2, pdb2};
        if (CHECK_OK(bt_run(plan, ws, uids, ptrs, 5))) {
            bt_check_tol(&vx, pR2, dR2, 2e-2, "apex dconv + drelu into R");
            bt_check_tol(&vbf, pdb2, db2, 5e-2, "apex dconv + drelu + dbias");
        }
        cudnnBackendDestroyDescriptor(plan);
    }
    bt_destroy_all((bdesc[]){g3, rop2, drelu2, dconv, tA, tr2, tR2, tdb2}, 8);
    tbuf_free(pr2), tbuf_free(pR2), tbuf_free(pdb2);
    free(dA), free(r2), free(dR2), free(db2);
    bt_destroy_all((bdesc[]){g2, rop, drelu, red, tdy, tr, tR, tdb}, 8);
    bt_destroy_all((bdesc[]){cd, add_pw, mul_pw, relu_pw, drelu_pw, tx, tw, tc, tb, tB, tm, tM, ty}, 13);
    void *hb[] = {px, pw, pb, pm, py, pdy, pr, pR, pdb};
    for (size_t i = 0; i < TLEN(hb); i++) tbuf_free(hb[i]);
    tview_destroy(&vx), tview_destroy(&vw), tview_destroy(&vy), tview_destroy(&vb), tview_destroy(&vm);
    tview_destroy(&vbf);
    free(x), free(wv), free(b), free(m), free(want), free(dy), free(r), free(dR), free(db);
}

/* ---- PyTorch's quantized cuDNN linear (aten/src/ATen/native/quantized/cudnn/Linear.cpp) -------- */

/* QLinearInt8 on cuDNN (cuDNN 8.4-era PyTorch): an INT8 x [1, M, K] times the transposed INT8
   weight [1, K, N] (strides {K N, 1, K}) into a virtual FLOAT 'y'; with a bias, a MUL 'b' * 'c' ->
   'd' "in place" (d and b one buffer) whose output **no op reads**, and an ADD of 'y' and 'n' (the
   same buffer again, "an additional entry ... appears to be needed in ... cudnn (8.4.0). Without
   it, some test cases are failing. NVIDIA is currently investigating") into 'e', ReLU, and a MUL by
   's' into INT8 'r'. The graph is in two pieces joined only through memory, and what the ADD
   reads depends on whether the MUL's piece ran first: graph finalize refuses it (BAD_PARAM, a
   graph in several pieces). Without the bias the graph is one piece, but no GEMM of ours runs
   int8 operands: NOT_SUPPORTED at graph finalize. */
TEST(compat_backend_pytorch_quantized_linear_two_pieces_refused)
{
    const int64_t M = 4, K = 8, N = 6;
    const int64_t xd[3] = {1, M, K}, xs[3] = {M * K, K, 1};
    const int64_t wd[3] = {1, K, N}, ws_[3] = {K * N, 1, K};
    const int64_t yd[3] = {1, M, N}, ys[3] = {M * N, N, 1};
    const cudnnDataType_t i8 = CUDNN_DATA_INT8, f32 = CUDNN_DATA_FLOAT;
    bdesc tx = bt_tensor_dims('x', i8, 3, xd, xs, false), tw = bt_tensor_dims('w', i8, 3, wd, ws_, false);
    bdesc ty = bt_tensor_dims('y', f32, 3, yd, ys, true), tb = bt_tensor_dims('b', f32, 3, yd, ys, false);
    bdesc tc = bt_tensor_dims('c', f32, 3, yd, ys, false), td = bt_tensor_dims('d', f32, 3, yd, ys, false);
    bdesc tn = bt_tensor_dims('n', f32, 3, yd, ys, false), te = bt_tensor_dims('e', f32, 3, yd, ys, false);
    bdesc tf = bt_tensor_dims('f', f32, 3, yd, ys, true), ts = bt_tensor_dims('s', f32, 3, yd, ys, false);
    bdesc tr = bt_tensor_dims('r', i8, 3, yd, ys, false);
    bdesc lin = bt_matmul_op(tx, tw, ty, CUDNN_DATA_INT32);
    bdesc mul_pw = pw_float(CUDNN_POINTWISE_MUL), add_pw = pw_float(CUDNN_POINTWISE_ADD);
    bdesc relu_pw = pw_float(CUDNN_POINTWISE_RELU_FWD);
    bdesc bmul = apex_pw_op(mul_pw, tb, tc, td, NULL), add = apex_pw_op(add_pw, ty, tn, te, NULL);
    bdesc relu = apex_pw_op(relu_pw, te, NULL, tf, NULL), rq = apex_pw_op(mul_pw, tf, ts, tr, NULL);
    bdesc ops[5] = {lin, bmul, add, relu, rq};
    bdesc g = bt_make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    cudnnHandle_t h = test_handle();
    bt_set(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 5, ops);
    bt_set(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    CHECK_STATUS(cudnnBackendFinalize(g), CUDNN_STATUS_BAD_PARAM);
    /* without the bias the graph is one piece, but no GEMM here runs int8 operands: the graph has no
       engine (NOT_SUPPORTED at its finalize, not BAD_PARAM at Execute) */
    bdesc ops1[3] = {lin, apex_pw_op(relu_pw, ty, NULL, tf, NULL), rq};
    bdesc g1 = bt_make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    bt_set(g1, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 3, ops1);
    bt_set(g1, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    CHECK_STATUS(cudnnBackendFinalize(g1), CUDNN_STATUS_NOT_SUPPORTED);
    bt_destroy_all((bdesc[]){g1, ops1[1], g, rq, relu, add, bmul, relu_pw, add_pw, mul_pw, lin}, 11);
    bt_destroy_all((bdesc[]){tx, tw, ty, tb, tc, td, tn, te, tf, ts, tr}, 11);
}

/* ---- MXNet's cuDNN v8 convolution ops (src/operator/cudnn_ops.cc, cudnn_cxx.h) ---------------- */

/* A fresh descriptor of `kind` filled by one GetAttribute of `name` (cudnn_cxx's GetAttr: the
   count must come back 1). */
static bdesc mx_get_one(bdesc d, cudnnBackendAttributeName_t name, cudnnBackendDescriptorType_t kind)
{
    bdesc out = bt_make(kind);
    int64_t n = -1;
    CHECK_OK(cudnnBackendGetAttribute(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &out));
    CHECK(n == 1);
    return out;
}

/* MXNet's ExcludeNumerics by default (MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION off): an engine
   whose notes, read from the ENGINE into CUDNN_NUMERICAL_NOTE_TYPE_COUNT slots, hold
   DOWN_CONVERT_INPUTS is skipped; the behaviour notes are read the same way. */
static bool mx_engine_compatible(bdesc engine)
{
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    cudnnBackendBehaviorNote_t behavior[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    int64_t n = -1, nb = -1;
    CHECK_OK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                      CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, notes));
    CHECK_OK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                      CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &nb, behavior));
    for (int64_t i = 0; i < n; i++)
        if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) return false;
    return true;
}

/* MXNet's ClonePlan: the kept plan's configuration and engine read into fresh descriptors, the
   engine's GLOBAL_INDEX, the knob choices fetched into CUDNN_KNOB_TYPE_COUNTS fresh KNOB_CHOICE
   descriptors; a new ENGINE (GLOBAL_INDEX set before OPERATION_GRAPH) on the new graph, a new
   ENGINECFG given the fetched choices (**count 0 and a NULL array** when there are none: an
   empty std::vector's data()), a new plan (HANDLE before ENGINE_CONFIG). */
static bdesc mx_clone_plan(bdesc g, bdesc plan)
{
    bdesc cfg = mx_get_one(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    bdesc engine = mx_get_one(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    int64_t index = -1, n = -1, nk = -1;
    CHECK_OK(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index));
    bdesc choices[CUDNN_KNOB_TYPE_COUNTS];
    for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; i++) choices[i] = bt_make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    CHECK_OK(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                      CUDNN_KNOB_TYPE_COUNTS, &nk, choices));
    bdesc e2 = bt_make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    bt_set_i64(e2, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, index);
    bt_set_desc(e2, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, g);
    CHECK_OK(cudnnBackendFinalize(e2));
    bdesc c2 = bt_make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    bt_set_desc(c2, CUDNN_ATTR_ENGINECFG_ENGINE, e2);
    CHECK_OK(cudnnBackendSetAttribute(c2, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, nk,
                                      nk > 0 ? (void *)choices : NULL));
    CHECK_OK(cudnnBackendFinalize(c2));
    cudnnHandle_t h = test_handle();
    bdesc p2 = bt_make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    bt_set(p2, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    bt_set_desc(p2, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, c2);
    CHECK_OK(cudnnBackendFinalize(p2));
    bt_destroy_all(choices, CUDNN_KNOB_TYPE_COUNTS);
    bt_destroy_all((bdesc[]){cfg, engine, e2, c2}, 4);
    return p2;
}

/* MXNet's convolution graph on tensors laid out as its params say: a 1-D NCW convolution made 2-D
   (x {N, C, 1, W}, pads {0, p}, strides {1, s}, dilations {1, d}: "making spacial dims 2D: 1 x
   W"), or a 2-D NHWC one (dims in NCHW order, channels-last strides for x, w and y); UIDs
   X, W, Y, BYTE_ALIGNMENT 16, IS_VIRTUAL false set explicitly; COMP_TYPE FLOAT; the graph's
   HANDLE set before its OPS; ALPHA 1 and BETA 1 as FLOAT when the gradient is added (add_to). */
struct mx_conv {
    struct tview v[3];
    bdesc t[3], cd, op, g;
};

static void mx_conv_build(struct mx_conv *m, const struct ref_conv *rc, int layout, bool add_to)
{
    tconv_views(rc, CUDNN_DATA_FLOAT, layout, layout, &m->v[0], &m->v[1], &m->v[2]);
    for (int i = 0; i < 3; i++) {
        m->t[i] = bt_make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        int64_t d64[4], s64[4];
        cudnnDataType_t dt = CUDNN_DATA_FLOAT;
        bool virt = false;
        for (int k = 0; k < 4; k++) d64[k] = m->v[i].dims[k], s64[k] = m->v[i].strides[k];
        bt_set_i64(m->t[i], CUDNN_ATTR_TENSOR_UNIQUE_ID, i + 1);
        bt_set(m->t[i], CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
        bt_set_i64(m->t[i], CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);
        bt_set(m->t[i], CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, d64);
        bt_set(m->t[i], CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, s64);
        bt_set(m->t[i], CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
        CHECK_OK(cudnnBackendFinalize(m->t[i]));
    }
    int64_t pad[2] = {rc->pad[0], rc->pad[1]}, stride[2] = {rc->stride[0], rc->stride[1]};
    int64_t dil[2] = {rc->dil[0], rc->dil[1]}, nsp = 2;
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    m->cd = bt_make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    bt_set(m->cd, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &nsp);
    bt_set(m->cd, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    bt_set(m->cd, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    bt_set(m->cd, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    bt_set(m->cd, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
    bt_set(m->cd, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    bt_set(m->cd, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    CHECK_OK(cudnnBackendFinalize(m->cd));
    m->op = bt_make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    bt_set_desc(m->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, m->cd);
    bt_set_desc(m->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, m->t[0]);
    bt_set_desc(m->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, m->t[1]);
    bt_set_desc(m->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, m->t[2]);
    bt_set_f(m->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, 1.0f);
    bt_set_f(m->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, add_to ? 1.0f : 0.0f);
    CHECK_OK(cudnnBackendFinalize(m->op));
    cudnnHandle_t h = test_handle();
    m->g = bt_make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    bt_set(m->g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    bt_set(m->g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &m->op);
    CHECK_OK(cudnnBackendFinalize(m->g));
}

static void mx_conv_free(struct mx_conv *m)
{
    bt_destroy_all((bdesc[]){m->g, m->op, m->cd, m->t[0], m->t[1], m->t[2]}, 6);
    for (int i = 0; i < 3; i++) tview_destroy(&m->v[i]);
}

/* Runs a plan on fresh x, w and y (y holding `prior` when the result is added to it) and checks
   y against the reference. */
static void mx_run_check(struct mx_conv *m, const struct ref_conv *rc, bdesc plan, bool add_to, const char *what)
{
    double *x = tview_random(m->v[0].count, -1, 1), *w = tview_random(m->v[1].count, -1, 1);
    double *prior = tview_random(m->v[2].count, -1, 1), *want = malloc(sizeof(double) * (size_t)m->v[2].count);
    ref_conv_fwd(rc, x, w, want);
    for (int64_t i = 0; add_to && i < m->v[2].count; i++) want[i] += prior[i];
    void *ptrs[3] = {tview_upload(&m->v[0], x), tview_upload(&m->v[1], w), tview_upload(&m->v[2], add_to ? prior : NULL)};
    int64_t ws = 0;
    CHECK_OK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, NULL, &ws));
    const int64_t uids[3] = {1, 2, 3};
    if (CHECK_OK(bt_run(plan, ws, uids, ptrs, 3)))
        bt_check_tol(&m->v[2], ptrs[2], want, bt_graph_tol(CUDNN_DATA_FLOAT), what);
    for (int i = 0; i < 3; i++) tview_free(&m->v[i], ptrs[i]);
    free(x), free(w), free(prior), free(want);
}

/* MXNet's Conv::Make and Conv::Clone (cudnn_ops.cc): SelectPlan's GetPlans with HeurMode()'s
   default **CUDNN_HEUR_MODE_B** (cuDNN 8.1 and later), the configurations counted then fetched,
   a plan of each kept when it builds, fits the workspace limit and its engine's notes are
   compatible; when none is kept, MakeFallbackPlans over global indices 0..57
   (kMaxConvFallbacks): an ENGINE of each (NOT_SUPPORTED and ARCH_MISMATCH at finalize skipped),
   a configuration **without knob choices**, a plan, the notes read from the engine. The first
   plan is executed (variant pack UNIQUE_IDS, DATA_POINTERS, WORKSPACE: NULL for 0 bytes); a later
   call on other tensors of the same shapes **clones the plan onto a new graph** (mx_clone_plan)
   and executes the clone. A 1-D NCW convolution made 2-D and a 2-D NHWC one with add_to. */
TEST(compat_backend_mxnet_clone_plan_and_fallbacks)
{
    static const struct { int layout; bool add_to; struct ref_conv rc; } cases[] = {
        {TV_NCHW, false, {2, 2, 3, 4, 1, {1, 13}, {1, 3}, {0}, {0, 2}, {1, 2}, {1, 2}, false}},
        {TV_NHWC, true, {2, 2, 5, 6, 1, {6, 7}, {3, 3}, {0}, {1, 1}, {1, 1}, {1, 1}, false}},
    };
    for (size_t k = 0; k < TLEN(cases); k++) {
        struct ref_conv rc = cases[k].rc;
        if (!CHECK(ref_conv_out_dims(&rc))) continue;
        struct mx_conv m;
        mx_conv_build(&m, &rc, cases[k].layout, cases[k].add_to);
        /* GetPlans: MODE_B's configurations */
        bdesc heur = bt_make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_B;
        bt_set_desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, m.g);
        bt_set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm);
        bdesc kept = NULL;
        if (CHECK_OK(cudnnBackendFinalize(heur))) {
            int64_t n = 0, got = 0;
            CHECK_OK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n,
                                              NULL));
            bdesc *cfgs = malloc(sizeof(bdesc) * (size_t)(n > 0 ? n : 1));
            for (int64_t i = 0; i < n; i++) cfgs[i] = bt_make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
            CHECK_OK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n,
                                              &got, cfgs));
            for (int64_t i = 0; i < got && kept == NULL; i++) {
                bdesc e = mx_get_one(cfgs[i], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
                int64_t ws = 0;
                bdesc p = mx_engine_compatible(e) ? bt_plan_of_cfg(cfgs[i], &ws) : NULL;
                cudnnBackendDestroyDescriptor(e);
                kept = p;
            }
            bt_destroy_all(cfgs, (int)n);
            free(cfgs);
        }
        cudnnBackendDestroyDescriptor(heur);
        /* MakeFallbackPlans: every index up to kMaxConvFallbacks, knob choices never set */
        bdesc fallback = NULL;
        int built = 0;
        cudnnHandle_t h = test_handle();
        for (int64_t ix = 0; ix < 58; ix++) {
            bdesc e = bt_make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
            bt_set_desc(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, m.g);
            bt_set_i64(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, ix);
            cudnnStatus_t st = cudnnBackendFinalize(e);
            if (st == CUDNN_STATUS_SUCCESS) {
                bdesc c = bt_make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR), p = bt_make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
                bt_set_desc(c, CUDNN_ATTR_ENGINECFG_ENGINE, e);
                CHECK_OK(cudnnBackendFinalize(c));
                bt_set(p, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
                bt_set_desc(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, c);
                st = cudnnBackendFinalize(p);
                if (st == CUDNN_STATUS_SUCCESS && mx_engine_compatible(e)) {
                    built++;
                    if (fallback == NULL) fallback = p, p = NULL;
                } else if (st != CUDNN_STATUS_SUCCESS) {
                    CHECK(st == CUDNN_STATUS_NOT_SUPPORTED || st == CUDNN_STATUS_ARCH_MISMATCH);
                }
                if (p) cudnnBackendDestroyDescriptor(p);
                cudnnBackendDestroyDescriptor(c);
            } else {
                CHECK(st == CUDNN_STATUS_NOT_SUPPORTED || st == CUDNN_STATUS_ARCH_MISMATCH);
            }
            cudnnBackendDestroyDescriptor(e);
        }
        CHECK(built > 0 && fallback != NULL);
        const char *what[2][3] = {{"1-D as 2-D, heuristic plan", "1-D as 2-D, fallback plan", "1-D as 2-D, cloned plan"},
                                  {"NHWC add_to, heuristic plan", "NHWC add_to, fallback plan",
                                   "NHWC add_to, cloned plan"}};
        if (CHECK(kept != NULL)) mx_run_check(&m, &rc, kept, cases[k].add_to, what[k][0]);
        if (fallback) mx_run_check(&m, &rc, fallback, cases[k].add_to, what[k][1]);
        if (kept) {
            struct mx_conv m2;
            mx_conv_build(&m2, &rc, cases[k].layout, cases[k].add_to);
            bdesc clone = mx_clone_plan(m2.g, kept);
            mx_run_check(&m2, &rc, clone, cases[k].add_to, what[k][2]);
            cudnnBackendDestroyDescriptor(clone);
            mx_conv_free(&m2);
            cudnnBackendDestroyDescriptor(kept);
        }
        if (fallback) cudnnBackendDestroyDescriptor(fallback);
        mx_conv_free(&m);
    }
}
