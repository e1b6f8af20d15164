/* compat_syclomatic_bn.c: the batch-normalization Ex replay of SYCLomatic's cuDNN tests
   (oneapi-src/SYCLomatic-test, features/feature_case/dnn/cudnn-bnp3.cu; compat_syclomatic.c holds
   the others): its table of NVIDIA's values spot-checked, then fresh random values against the
   double reference of tests/ref/batchnorm.c. */
#include "ref/batchnorm.h"
#include "tensors.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* cudnn-bnp3.cu test8: cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize and
   cudnnGetBatchNormalizationTrainingExReserveSpaceSize for PER_ACTIVATION and
   CUDNN_BATCHNORM_OPS_BN_ACTIVATION (RELU, NaN propagated), then
   cudnnBatchNormalizationForwardTrainingEx with **zDesc given and z NULL**, alpha 2.5, beta 1.5 over
   an output of 1s, factor 0.5, eps 1; cudnnGetBatchNormalizationBackwardExWorkspaceSize with
   dzDesc given, and cudnnBatchNormalizationBackwardEx with y, **dzDesc and dz given** (dz never
   written), alpha and beta 2.5 and 1.5 for the data and the parameter gradients over priors of 0
   (dx) and i + 4 (dscale, dbias), the saved mean and inverse deviation and the reserve. x = i + 4,
   dy = 100 i + 1, every per-slot array i + 4. The program's values, then fresh random values (the
   RELU cutting) with dz and y's prior NaN, against the reference. */
TEST(compat_bn_syclomatic_ex_activation_z_desc_without_z)
{
    enum { N = 2, C = 4, H = 5, W = 5, E = N * C * H * W, S = C * H * W };
    const cudnnBatchNormMode_t mode = CUDNN_BATCHNORM_PER_ACTIVATION;
    const cudnnBatchNormOps_t ops = CUDNN_BATCHNORM_OPS_BN_ACTIVATION;
    cudnnHandle_t h = test_handle();
    cudnnActivationDescriptor_t act;
    cudnnTensorDescriptor_t xd, yd, sd;
    CHECK_OK(cudnnCreateActivationDescriptor(&act));
    CHECK_OK(cudnnCreateTensorDescriptor(&xd));
    CHECK_OK(cudnnCreateTensorDescriptor(&yd));
    CHECK_OK(cudnnCreateTensorDescriptor(&sd));
    size_t ws = 0, rs = 0, bws = 0;
    bool ok = CHECK_OK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0)) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W)) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W)) &&
              CHECK_OK(cudnnSetTensor4dDescriptor(sd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, C, H, W)) &&
              CHECK_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, mode, ops, xd, yd, yd, sd, act,
                                                                                &ws)) &&
              CHECK_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, mode, ops, act, xd, &rs)) &&
              CHECK_OK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, mode, ops, xd, yd, yd, yd, xd, sd, act,
                                                                         &bws));
    const struct ref_bn_shape shape = {N, C, H * W, true};
    const double eps = 1.0, factor = 0.5;
    for (int pass = 0; ok && pass < 2; pass++) {
        const bool program = pass == 0;
        double *x = tview_random(E, -3, 3), *dy = tview_random(E, -1, 1), *yprior = tview_fill(E, 1);
        double *dxprior = tview_fill(E, 0), *slot[4]; /* scale, bias, running mean, running var */
        for (int k = 0; k < 4; k++) slot[k] = tview_random(S, k == 3 ? 0.2 : -1, 1.5);
        double *pprior = tview_fill(S, 0);
        for (int i = 0; i < S; i++) pprior[i] = i + 4;
        for (int i = 0; program && i < E; i++) x[i] = i + 4, dy[i] = 100.0 * i + 1;
        for (int i = 0; program && i < S; i++)
            for (int k = 0; k < 4; k++) slot[k][i] = i + 4;
        const float alpha = 2.5f, beta = program ? 1.5f : 0.0f;
        double *mean = malloc(sizeof(double) * S), *var = malloc(sizeof(double) * S), *pre = malloc(sizeof(double) * E);
        double *y = malloc(sizeof(double) * E), *dpre = malloc(sizeof(double) * E), *dx = malloc(sizeof(double) * E);
        double *ds = malloc(sizeof(double) * S), *db = malloc(sizeof(double) * S);
        ref_bn_stats(&shape, x, mean, var);
        ref_bn_forward(&shape, x, NULL, slot[0], slot[1], mean, var, eps, CUDNN_ACTIVATION_RELU, 0, pre, y);
        ref_bn_backward(&shape, x, dy, pre, CUDNN_ACTIVATION_RELU, 0, slot[0], mean, var, eps, dpre, dx, ds, db);
        for (int i = 0; i < E; i++) y[i] = alpha * y[i] + beta * yprior[i], dx[i] = alpha * dx[i] + beta * dxprior[i];
        for (int i = 0; i < S; i++) ds[i] = alpha * ds[i] + beta * pprior[i], db[i] = alpha * db[i] + beta * pprior[i];
        void *px = tvalues_upload(CUDNN_DATA_FLOAT, x, E), *pdy = tvalues_upload(CUDNN_DATA_FLOAT, dy, E);
        void *py = program ? tvalues_upload(CUDNN_DATA_FLOAT, yprior, E) : tbuf_alloc(sizeof(float) * E);
        void *pdx = program ? tvalues_upload(CUDNN_DATA_FLOAT, dxprior, E) : tbuf_alloc(sizeof(float) * E);
        void *pds = program ? tvalues_upload(CUDNN_DATA_FLOAT, pprior, S) : tbuf_alloc(sizeof(float) * S);
        void *pdb = program ? tvalues_upload(CUDNN_DATA_FLOAT, pprior, S) : tbuf_alloc(sizeof(float) * S);
        void *pdz = tbuf_alloc(sizeof(float) * E), *psm = tbuf_alloc(sizeof(float) * S), *psv = tbuf_alloc(sizeof(float) * S);
        void *pws = tbuf_alloc(ws ? ws : 4), *prs = tbuf_alloc(rs ? rs : 4), *pbws = tbuf_alloc(bws ? bws : 4);
        void *ps[4];
        for (int k = 0; k < 4; k++) ps[k] = tvalues_upload(CUDNN_DATA_FLOAT, slot[k], S);
        ok = CHECK_OK(cudnnBatchNormalizationForwardTrainingEx(h, mode, ops, &alpha, &beta, xd, px, yd, NULL, yd, py, sd,
                                                              ps[0], ps[1], factor, ps[2], ps[3], eps, psm, psv, act,
                                                              pws, ws, prs, rs)) &&
             tvalues_check(CUDNN_DATA_FLOAT, py, y, E, 1e-4, "BN Ex y") &&
             CHECK_OK(cudnnBatchNormalizationBackwardEx(h, mode, ops, &alpha, &beta, &alpha, &beta, xd, px, yd, py, yd,
                                                       pdy, yd, pdz, xd, pdx, sd, ps[0], ps[1], pds, pdb, eps, psm, psv,
                                                       act, pbws, bws, prs, rs)) &&
             tvalues_check(CUDNN_DATA_FLOAT, pdx, dx, E, program ? 1e-3 : 1e-5, "BN Ex dx") &&
             tvalues_check(CUDNN_DATA_FLOAT, pds, ds, S, program ? 1e-3 : 1e-5, "BN Ex dscale") &&
             tvalues_check(CUDNN_DATA_FLOAT, pdb, db, S, 1e-5, "BN Ex dbias");
        if (ok && program) {
            /* the program's tables: y[0], y[100]; dx[0]; dscale[0]; dbias[1] */
            double *gy = tvalues_download(CUDNN_DATA_FLOAT, py, E), *gx = tvalues_download(CUDNN_DATA_FLOAT, pdx, E);
            double *gs = tvalues_download(CUDNN_DATA_FLOAT, pds, S), *gb = tvalues_download(CUDNN_DATA_FLOAT, pdb, S);
            CHECK(fabs(gy[0] - 1.502) < 1e-3 && fabs(gy[100] - 21.498) < 1e-2 && fabs(gx[0] - -0.399822) < 1e-3);
            CHECK(fabs(gs[0] - 25001) < 1 && fabs(gb[1] - 25512.5) < 1);
            free(gy), free(gx), free(gs), free(gb);
        }
        void *bufs[] = {px, pdy, py, pdx, pds, pdb, pdz, psm, psv, pws, prs, pbws};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) tbuf_free(bufs[i]);
        for (int k = 0; k < 4; k++) tbuf_free(ps[k]), free(slot[k]);
        free(x), free(dy), free(yprior), free(dxprior), free(pprior), free(mean), free(var), free(pre), free(y);
        free(dpre), free(dx), free(ds), free(db);
    }
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyTensorDescriptor(sd);
    cudnnDestroyActivationDescriptor(act);
}
