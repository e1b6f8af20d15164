/* normalization.c: tests of the 8.x normalization API (cudnnNormalization*,
   cudnnDeriveNormTensorDescriptor): the same cases as batch normalization through the other API
   (two per-slot descriptors of different layouts, both algorithms, the fused ops in inference
   too), the size queries, and the API's own rules: groupCnt must be 1, unknown algorithms and
   PERSIST per activation are NOT_SUPPORTED, PERSIST backward needs the saved statistics. */
#include "bn_harness.h"

#include <stdlib.h>

static const cudnnDataType_t all_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF,
                                            CUDNN_DATA_BFLOAT16};

TEST(norm_types_layouts_ops)
{
    int dims4[4] = {2, 8, 3, 2}, dims5[5] = {2, 3, 2, 2, 3};
    for (size_t t = 0; t < 4; t++) {
        for (int layout = 0; layout < TV_LAYOUTS; layout++) {
            for (int ops = 0; ops < 3; ops++) {
                bool five = layout == TV_PADDED && ops == 1;
                struct bn_case c = bn_case_default(BN_API_NORM, all_types[t], five ? 5 : 4, five ? dims5 : dims4);
                c.layout = c.out_layout = layout;
                c.ops = ops;
                c.act_mode = ops == 1 ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_TANH;
                c.per_activation = (layout + ops) % 3 == 0;
                c.persistent = !c.per_activation && layout % 2;
                c.slot_strided = layout == TV_NCHW_PADDED || layout == TV_PADDED;
                c.no_workspace = layout == TV_NHWC_PADDED;
                c.use_saved = c.persistent || ops != 0;
                c.save = c.use_saved || layout != TV_NHWC;
                if (ops == 2) {
                    c.alpha = 0.75;
                    c.beta = 0.5;
                    c.alpha_param = 0.5;
                    c.beta_param = 1;
                }
                bn_check_case(&c);
            }
        }
    }
}

TEST_ONCE(norm_derive_descriptors)
{
    cudnnTensorDescriptor_t x, sb, mv;
    CHECK_OK(cudnnCreateTensorDescriptor(&x));
    CHECK_OK(cudnnCreateTensorDescriptor(&sb));
    CHECK_OK(cudnnCreateTensorDescriptor(&mv));
    int dims[5] = {2, 6, 3, 4, 5}, strides[5] = {360, 60, 20, 5, 1};
    CHECK_OK(cudnnSetTensorNdDescriptor(x, CUDNN_DATA_HALF, 5, dims, strides));
    for (int mode = 0; mode < 2; mode++) {
        CHECK_OK(cudnnDeriveNormTensorDescriptor(sb, mv, x, (cudnnNormMode_t)mode, 1));
        cudnnTensorDescriptor_t both[2] = {sb, mv};
        for (int i = 0; i < 2; i++) {
            cudnnDataType_t dt;
            int nb, gd[8], gs[8];
            CHECK_OK(cudnnGetTensorNdDescriptor(both[i], 8, &dt, &nb, gd, gs));
            CHECK(dt == CUDNN_DATA_FLOAT && nb == 5 && gd[0] == 1 && gd[1] == 6);
            for (int d = 2; d < 5; d++) CHECK(gd[d] == (mode == CUDNN_NORM_PER_ACTIVATION ? dims[d] : 1));
        }
    }
    CHECK_STATUS(cudnnDeriveNormTensorDescriptor(sb, mv, x, CUDNN_NORM_PER_CHANNEL, 2), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnDeriveNormTensorDescriptor(sb, mv, x, (cudnnNormMode_t)2, 1), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnDeriveNormTensorDescriptor(sb, NULL, x, CUDNN_NORM_PER_CHANNEL, 1), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnDeriveNormTensorDescriptor(NULL, mv, x, CUDNN_NORM_PER_CHANNEL, 1), CUDNN_STATUS_BAD_PARAM);
    /* the failures above left the last (per-channel) result in place */
    cudnnDataType_t dt;
    int nb, gd[8], gs[8];
    CHECK_OK(cudnnGetTensorNdDescriptor(mv, 8, &dt, &nb, gd, gs));
    CHECK(nb == 5 && gd[1] == 6 && gd[2] == 1 && gd[3] == 1 && gd[4] == 1);
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(sb);
    cudnnDestroyTensorDescriptor(mv);
}

TEST(norm_api_rules)
{
    cudnnHandle_t h = test_handle();
    struct tview x, p, pw;
    int dims[4] = {2, 4, 2, 2}, pd[4] = {1, 4, 1, 1}, pwd[4] = {1, 4, 2, 2};
    tview_init(&x, CUDNN_DATA_FLOAT, 4, dims, TV_NHWC);
    tview_init(&p, CUDNN_DATA_FLOAT, 4, pd, TV_NCHW);
    tview_init(&pw, CUDNN_DATA_FLOAT, 4, pwd, TV_NCHW);
    double v[32];
    tfill_random(CUDNN_DATA_DOUBLE, v, 32, -1, 2);
    void *bx = tview_upload(&x, v), *by = tview_upload(&x, NULL), *bdx = tview_upload(&x, NULL);
    void *bs = tview_upload(&p, v), *bb = tview_upload(&p, v + 4), *bm = tview_upload(&p, v + 8), *bv = tview_upload(&p, v + 1);
    void *bsm = tview_upload(&p, NULL), *bsi = tview_upload(&p, NULL), *bds = tview_upload(&p, NULL), *bdb = tview_upload(&p, NULL);
    void *snap_y = tbuf_snapshot(by, tview_bytes(&x)), *snap_dx = tbuf_snapshot(bdx, tview_bytes(&x)), *snap_sm = tbuf_snapshot(bsm, tview_bytes(&p));
    float one = 1, zero = 0;
    size_t sz = 777;
    const cudnnNormMode_t PC = CUDNN_NORM_PER_CHANNEL;
    const cudnnNormOps_t N = CUDNN_NORM_OPS_NORM;
    const cudnnNormAlgo_t STD = CUDNN_NORM_ALGO_STANDARD, PER = CUDNN_NORM_ALGO_PERSIST;
#define UNTOUCHED()                                                                                   \
    CHECK(tbuf_unchanged(by, snap_y, tview_bytes(&x), "an output") && tbuf_unchanged(bdx, snap_dx, tview_bytes(&x), "an output") && tbuf_unchanged(bsm, snap_sm, tview_bytes(&p), "an output"))
    CHECK_STATUS(cudnnNormalizationForwardInference(h, PC, N, STD, &one, &zero, x.desc, bx, p.desc, bs, bb, p.desc,
                                                    bm, bv, NULL, NULL, NULL, x.desc, by, 1e-5, 2),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnNormalizationForwardInference(h, PC, N, (cudnnNormAlgo_t)2, &one, &zero, x.desc, bx, p.desc,
                                                    bs, bb, p.desc, bm, bv, NULL, NULL, NULL, x.desc, by, 1e-5, 1),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnNormalizationForwardInference(h, CUDNN_NORM_PER_ACTIVATION, N, PER, &one, &zero, x.desc, bx,
                                                    pw.desc, bs, bb, pw.desc, bm, bv, NULL, NULL, NULL, x.desc, by,
                                                    1e-5, 1), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnNormalizationForwardInference(h, (cudnnNormMode_t)2, N, STD, &one, &zero, x.desc, bx, p.desc,
                                                    bs, bb, p.desc, bm, bv, NULL, NULL, NULL, x.desc, by, 1e-5, 1),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnNormalizationForwardInference(h, PC, (cudnnNormOps_t)3, STD, &one, &zero, x.desc, bx, p.desc,
                                                    bs, bb, p.desc, bm, bv, NULL, NULL, NULL, x.desc, by, 1e-5, 1),
                 CUDNN_STATUS_BAD_PARAM);
    /* the mean/variance descriptor is checked on its own */
    CHECK_STATUS(cudnnNormalizationForwardInference(h, PC, N, STD, &one, &zero, x.desc, bx, p.desc, bs, bb, pw.desc,
                                                    bm, bv, NULL, NULL, NULL, x.desc, by, 1e-5, 1),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnNormalizationForwardInference(h, PC, N, STD, &one, &zero, x.desc, bx, p.desc, bs, bb, p.desc,
                                                    bm, bv, NULL, NULL, NULL, x.desc, by, -0.5, 1),
                 CUDNN_STATUS_BAD_PARAM);
    UNTOUCHED();
    CHECK_STATUS(cudnnNormalizationForwardTraining(h, PC, N, STD, &one, &zero, x.desc, bx, p.desc, bs, bb, 1,
                                                   p.desc, NULL, NULL, 1e-5, bsm, NULL, NULL, NULL, NULL, x.desc,
                                                   by, NULL, 0, NULL, 0, 1), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnNormalizationForwardTraining(h, PC, N, STD, &one, &zero, x.desc, bx, p.desc, bs, bb, 1,
                                                   p.desc, NULL, NULL, 1e-5, bsm, bsi, NULL, NULL, NULL, x.desc,
                                                   by, NULL, 0, NULL, 0, 0), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnNormalizationForwardTraining(h, PC, CUDNN_NORM_OPS_NORM_ACTIVATION, STD, &one, &zero, x.desc,
                                                   bx, p.desc, bs, bb, 1, p.desc, NULL, NULL, 1e-5, bsm, bsi, NULL,
                                                   NULL, NULL, x.desc, by, NULL, 0, NULL, 0, 1),
                 CUDNN_STATUS_BAD_PARAM);
    UNTOUCHED();
    /* PERSIST backward needs the saved statistics; STANDARD recomputes them */
    CHECK_STATUS(cudnnNormalizationBackward(h, PC, N, PER, &one, &zero, &one, &zero, x.desc, bx, NULL, NULL, x.desc,
                                            bx, NULL, NULL, x.desc, bdx, p.desc, bs, bb, bds, bdb, 1e-5, p.desc,
                                            NULL, NULL, NULL, NULL, 0, NULL, 0, 1), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnNormalizationBackward(h, PC, N, STD, &one, &zero, &one, &zero, x.desc, bx, NULL, NULL, x.desc,
                                            bx, NULL, NULL, x.desc, bdx, p.desc, bs, bb, bds, bdb, 1e-5, p.desc,
                                            NULL, NULL, NULL, NULL, 0, NULL, 0, 3), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnNormalizationBackward(h, PC, N, STD, &one, &zero, &one, &zero, x.desc, bx, NULL, NULL, x.desc,
                                            bx, NULL, NULL, x.desc, bdx, p.desc, bs, bb, bds, bdb, 1e-5, pw.desc,
                                            NULL, NULL, NULL, NULL, 0, NULL, 0, 1), CUDNN_STATUS_BAD_PARAM);
    UNTOUCHED();
    CHECK_OK(cudnnNormalizationBackward(h, PC, N, STD, &one, &zero, &one, &zero, x.desc, bx, NULL, NULL, x.desc, bx,
                                        NULL, NULL, x.desc, bdx, p.desc, bs, bb, bds, bdb, 1e-5, p.desc, NULL, NULL,
                                        NULL, NULL, 0, NULL, 0, 1));
    /* size queries */
    CHECK_OK(cudnnGetNormalizationTrainingReserveSpaceSize(h, PC, N, STD, NULL, x.desc, &sz, 1));
    CHECK(sz == 0);
    sz = 777;
    CHECK_STATUS(cudnnGetNormalizationTrainingReserveSpaceSize(h, PC, N, STD, NULL, x.desc, &sz, 4),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnGetNormalizationForwardTrainingWorkspaceSize(h, PC, N, STD, x.desc, NULL, x.desc, p.desc, NULL,
                                                                   pw.desc, &sz, 1), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetNormalizationBackwardWorkspaceSize(h, PC, N, STD, x.desc, NULL, x.desc, NULL, x.desc,
                                                            p.desc, NULL, p.desc, &sz, 0), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK(sz == 777);
    CHECK_OK(cudnnGetNormalizationForwardTrainingWorkspaceSize(h, PC, N, PER, x.desc, NULL, x.desc, p.desc, NULL,
                                                               p.desc, &sz, 1));
    CHECK_OK(cudnnGetNormalizationBackwardWorkspaceSize(h, PC, N, STD, x.desc, NULL, x.desc, NULL, x.desc, p.desc,
                                                        NULL, p.desc, &sz, 1));
#undef UNTOUCHED
    void *bufs[] = {bx, by, bdx, bs, bb, bm, bv, bsm, bsi, bds, bdb};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
    free(snap_y);
    free(snap_dx);
    free(snap_sm);
    tview_destroy(&x);
    tview_destroy(&p);
    tview_destroy(&pw);
}
