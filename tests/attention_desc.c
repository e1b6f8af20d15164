/* attention_desc.c: tests of the multi-head attention descriptors: the attention descriptor's
   Set/Get and its rejections (nothing changed by a failed Set), the sequence-data descriptor's
   Set/Get (axes, lengths, padding fill) and rejections, cudnnGetMultiHeadAttnBuffers, and the
   weight layout cudnnGetMultiHeadAttnWeights reports for every kind: the documented shapes and
   strides (W_Q as [H, qProj, qSize] strides [qProj, 1, H qProj]; W_O [H, oProj, head_v] strides
   [oProj head_v, 1, oProj]; biases [H, proj, 1]), tensors tiling the buffer without overlap, and
   NULL for a tensor the configuration lacks. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

struct attn_cfg {
    unsigned mode;
    int heads;
    double scaler;
    cudnnDataType_t dtype, comp;
    int q, k, v, qp, kp, vp, op, qo_max, kv_max, batch, beam;
};

static cudnnStatus_t set_attn(cudnnAttnDescriptor_t d, const struct attn_cfg *c, cudnnDropoutDescriptor_t drop)
{
    return cudnnSetAttnDescriptor(d, c->mode, c->heads, c->scaler, c->dtype, c->comp, CUDNN_DEFAULT_MATH, drop, NULL,
                                  c->q, c->k, c->v, c->qp, c->kp, c->vp, c->op, c->qo_max, c->kv_max, c->batch,
                                  c->beam);
}

static bool attn_holds(cudnnAttnDescriptor_t d, const struct attn_cfg *c, cudnnDropoutDescriptor_t drop)
{
    unsigned mode = 99;
    int v[15];
    double scaler = -1;
    cudnnDataType_t dt, cp;
    cudnnMathType_t math;
    cudnnDropoutDescriptor_t ad = (cudnnDropoutDescriptor_t)1, pd = (cudnnDropoutDescriptor_t)1;
    if (!CHECK_OK(cudnnGetAttnDescriptor(d, &mode, &v[0], &scaler, &dt, &cp, &math, &ad, &pd, &v[1], &v[2], &v[3],
                                         &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11])))
        return false;
    int want[] = {c->heads, c->q, c->k, c->v, c->qp, c->kp, c->vp, c->op, c->qo_max, c->kv_max, c->batch, c->beam};
    bool ok = mode == c->mode && scaler == c->scaler && dt == c->dtype && cp == c->comp &&
              math == CUDNN_DEFAULT_MATH && ad == drop && pd == NULL;
    for (int i = 0; i < 12; i++) ok = ok && v[i] == want[i];
    return CHECK(ok);
}

static const struct attn_cfg base_cfg = {CUDNN_ATTN_QUERYMAP_ONE_TO_ONE | CUDNN_ATTN_ENABLE_PROJ_BIASES,
                                         3, 0.5, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                         8, 6, 5, 4, 4, 2, 7, 5, 9, 4, 2};

TEST_ONCE(attn_descriptor)
{
    cudnnAttnDescriptor_t d;
    cudnnDropoutDescriptor_t drop;
    if (!CHECK_OK(cudnnCreateAttnDescriptor(&d)) || !CHECK_OK(cudnnCreateDropoutDescriptor(&drop))) return;
    struct attn_cfg c = base_cfg;
    CHECK_OK(set_attn(d, &c, drop));
    attn_holds(d, &c, drop);
    /* the Get skips NULL outputs */
    int heads = 0;
    CHECK_OK(cudnnGetAttnDescriptor(d, NULL, &heads, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                    NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(heads == 3);

    /* every rejection leaves the descriptor as it was */
    struct attn_cfg bad[16];
    int n = 0;
    bad[n] = c, bad[n++].mode = 4;
    bad[n] = c, bad[n++].heads = 0;
    bad[n] = c, bad[n++].scaler = -1;
    bad[n] = c, bad[n++].q = 0;
    bad[n] = c, bad[n++].v = -2;
    bad[n] = c, bad[n++].qp = -1;
    bad[n] = c, bad[n++].op = -1;
    bad[n] = c, bad[n++].kp = 3;      /* Q and K sizes after projection differ */
    bad[n] = c, bad[n++].qo_max = 0;
    bad[n] = c, bad[n++].batch = 0;
    bad[n] = c, bad[n++].beam = -1;
    bad[n] = c, bad[n++].dtype = (cudnnDataType_t)77;
    for (int i = 0; i < n; i++) CHECK_STATUS(set_attn(d, &bad[i], drop), CUDNN_STATUS_BAD_PARAM);
    struct attn_cfg pair = c;
    pair.comp = CUDNN_DATA_HALF; /* FLOAT data computed in HALF: not a documented pair */
    CHECK_STATUS(set_attn(d, &pair, drop), CUDNN_STATUS_NOT_SUPPORTED);
    pair.dtype = CUDNN_DATA_BFLOAT16, pair.comp = CUDNN_DATA_FLOAT;
    CHECK_STATUS(set_attn(d, &pair, drop), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnSetAttnDescriptor(d, 0, 1, 1.0, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, (cudnnMathType_t)9, NULL,
                                        NULL, 4, 4, 4, 0, 0, 0, 0, 2, 2, 1, 1),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(set_attn(d, &c, (cudnnDropoutDescriptor_t)d), CUDNN_STATUS_BAD_PARAM);
    attn_holds(d, &c, drop);

    /* the documented pairs: DOUBLE/DOUBLE, HALF/HALF, HALF/FLOAT; no projections at all */
    const cudnnDataType_t pairs[][2] = {{CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE}, {CUDNN_DATA_HALF, CUDNN_DATA_HALF},
                                        {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT}};
    for (int i = 0; i < 3; i++) {
        c = base_cfg;
        c.dtype = pairs[i][0], c.comp = pairs[i][1], c.mode = 0, c.qp = c.kp = c.vp = c.op = 0, c.k = c.q;
        CHECK_OK(set_attn(d, &c, NULL));
        attn_holds(d, &c, NULL);
    }
    CHECK_STATUS(cudnnGetAttnDescriptor((cudnnAttnDescriptor_t)drop, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyAttnDescriptor(d));
    CHECK_STATUS(cudnnDestroyAttnDescriptor(d), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyDropoutDescriptor(drop));
}

TEST_ONCE(seq_data_descriptor)
{
    cudnnSeqDataDescriptor_t d;
    if (!CHECK_OK(cudnnCreateSeqDataDescriptor(&d))) return;
    int dims[4];
    dims[CUDNN_SEQDATA_TIME_DIM] = 4, dims[CUDNN_SEQDATA_BATCH_DIM] = 3, dims[CUDNN_SEQDATA_BEAM_DIM] = 2,
    dims[CUDNN_SEQDATA_VECT_DIM] = 5;
    cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                  CUDNN_SEQDATA_VECT_DIM};
    int lengths[6] = {3, 4, 4, 0, 2, 1};
    float fill = -7.5f;
    /* never set: Get refuses */
    int nb = 0;
    CHECK_STATUS(cudnnGetSeqDataDescriptor(d, NULL, &nb, 0, NULL, NULL, NULL, 0, NULL, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, 6, lengths, &fill));

    cudnnDataType_t dt;
    int got_dims[4] = {0}, got_len[8] = {0};
    cudnnSeqDataAxis_t got_axes[4];
    size_t count = 0;
    float got_fill = 0;
    CHECK_OK(cudnnGetSeqDataDescriptor(d, &dt, &nb, 4, got_dims, got_axes, &count, 8, got_len, &got_fill));
    CHECK(dt == CUDNN_DATA_FLOAT && nb == 4 && count == 6 && got_fill == -7.5f);
    CHECK(memcmp(got_dims, dims, sizeof dims) == 0 && memcmp(got_axes, axes, sizeof axes) == 0);
    CHECK(memcmp(got_len, lengths, sizeof lengths) == 0 && got_len[6] == 0);
    /* fewer requested: the first ones; NULL outputs skipped (as NVIDIA's sample calls it) */
    int two[2] = {0};
    cudnnSeqDataAxis_t two_axes[2];
    CHECK_OK(cudnnGetSeqDataDescriptor(d, NULL, &nb, 2, two, two_axes, NULL, 0, NULL, NULL));
    CHECK(two[0] == 4 && two[1] == 3 && two_axes[0] == CUDNN_SEQDATA_BATCH_DIM && two_axes[1] == CUDNN_SEQDATA_TIME_DIM);
    CHECK_STATUS(cudnnGetSeqDataDescriptor(d, NULL, &nb, 4, NULL, got_axes, NULL, 0, NULL, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetSeqDataDescriptor(d, NULL, &nb, 0, NULL, NULL, NULL, 3, NULL, NULL), CUDNN_STATUS_BAD_PARAM);

    /* rejections, the descriptor unchanged */
    int bad_dims[4];
    memcpy(bad_dims, dims, sizeof dims);
    bad_dims[CUDNN_SEQDATA_BEAM_DIM] = 0;
    CHECK_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, bad_dims, axes, 6, lengths, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 3, dims, axes, 6, lengths, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, 5, lengths, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    int long_len[6] = {3, 4, 5, 0, 2, 1};
    CHECK_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, 6, long_len, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    int neg_len[6] = {3, 4, -1, 0, 2, 1};
    CHECK_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, 6, neg_len, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    cudnnSeqDataAxis_t twice[4] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                   CUDNN_SEQDATA_VECT_DIM};
    CHECK_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, twice, 6, lengths, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    cudnnSeqDataAxis_t vect_outer[4] = {CUDNN_SEQDATA_VECT_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                        CUDNN_SEQDATA_BATCH_DIM};
    CHECK_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, vect_outer, 6, lengths, NULL),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_INT8, 4, dims, axes, 6, lengths, NULL),
                 CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, NULL, axes, 6, lengths, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, 6, NULL, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnGetSeqDataDescriptor(d, &dt, &nb, 4, got_dims, got_axes, &count, 8, got_len, &got_fill));
    CHECK(memcmp(got_dims, dims, sizeof dims) == 0 && memcmp(got_len, lengths, sizeof lengths) == 0 &&
          got_fill == -7.5f);

    /* a re-Set without a fill reads back 0; double data */
    double dfill = 1;
    CHECK_OK(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_DOUBLE, 4, dims, axes, 6, lengths, NULL));
    CHECK_OK(cudnnGetSeqDataDescriptor(d, &dt, &nb, 0, NULL, NULL, NULL, 0, NULL, &dfill));
    CHECK(dt == CUDNN_DATA_DOUBLE && dfill == 0);
    CHECK_OK(cudnnDestroySeqDataDescriptor(d));
    CHECK_STATUS(cudnnDestroySeqDataDescriptor(d), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroySeqDataDescriptor(NULL));
}

/* The weight tensors of a configuration tile [0, size) exactly, each with the documented shape. */
static void check_layout(cudnnHandle_t h, const struct attn_cfg *c)
{
    cudnnAttnDescriptor_t d;
    cudnnTensorDescriptor_t w;
    if (!CHECK_OK(cudnnCreateAttnDescriptor(&d)) || !CHECK_OK(cudnnCreateTensorDescriptor(&w))) return;
    CHECK_OK(set_attn(d, c, NULL));
    size_t wbytes = 0, ws = 0, rs = 0, ws_inf = 0;
    CHECK_OK(cudnnGetMultiHeadAttnBuffers(h, d, &wbytes, &ws, &rs));
    CHECK_OK(cudnnGetMultiHeadAttnBuffers(h, d, &wbytes, &ws_inf, NULL));
    CHECK(rs > 0 && ws > 0 && ws_inf <= ws);
    size_t elem = c->dtype == CUDNN_DATA_DOUBLE ? 8 : c->dtype == CUDNN_DATA_FLOAT ? 4 : 2;
    int hv = c->vp > 0 ? c->vp : c->v;
    int proj[4] = {c->qp, c->kp, c->vp, c->op}, size[4] = {c->q, c->k, c->v, hv};
    bool biases = (c->mode & CUDNN_ATTN_ENABLE_PROJ_BIASES) != 0;
    size_t expect = 0;
    char *used = calloc(wbytes / elem + 1, 1);
    char *base = (char *)(uintptr_t)0x1000; /* the call only computes addresses */
    for (int kind = 0; kind < CUDNN_ATTN_WKIND_COUNT; kind++) {
        void *addr = (void *)1;
        CHECK_OK(cudnnGetMultiHeadAttnWeights(h, d, (cudnnMultiHeadAttnWeightKind_t)kind, wbytes, base, w, &addr));
        int i = kind % 4, p = proj[i];
        bool present = p > 0 && (kind < 4 || biases);
        if (!present) {
            CHECK(addr == NULL);
            continue;
        }
        cudnnDataType_t dt;
        int nb = 0, dims[3], strides[3];
        CHECK_OK(cudnnGetTensorNdDescriptor(w, 3, &dt, &nb, dims, strides));
        int want_dims[3], want_strides[3];
        if (kind < 3) {
            int wd[3] = {c->heads, p, size[i]}, wst[3] = {p, 1, c->heads * p};
            memcpy(want_dims, wd, sizeof wd), memcpy(want_strides, wst, sizeof wst);
        } else if (kind == 3) {
            int wd[3] = {c->heads, p, hv}, wst[3] = {p * hv, 1, p};
            memcpy(want_dims, wd, sizeof wd), memcpy(want_strides, wst, sizeof wst);
        } else {
            int wd[3] = {kind == 7 ? 1 : c->heads, p, 1}, wst[3] = {p, 1, 1};
            memcpy(want_dims, wd, sizeof wd), memcpy(want_strides, wst, sizeof wst);
        }
        if (!CHECK(nb == 3 && dt == c->dtype && memcmp(dims, want_dims, sizeof dims) == 0 &&
                   memcmp(strides, want_strides, sizeof strides) == 0))
            FAIL("kind %d: dims %d %d %d strides %d %d %d", kind, dims[0], dims[1], dims[2], strides[0], strides[1],
                 strides[2]);
        size_t first = (size_t)((char *)addr - base) / elem;
        for (int a = 0; a < dims[0]; a++)
            for (int b = 0; b < dims[1]; b++)
                for (int e = 0; e < dims[2]; e++) {
                    size_t at = first + (size_t)a * strides[0] + (size_t)b * strides[1] + (size_t)e * strides[2];
                    if (!CHECK(at < wbytes / elem && !used[at])) goto done;
                    used[at] = 1;
                    expect++;
                }
    }
    CHECK(expect * elem == wbytes);
done:
    free(used);
    /* bad input */
    void *addr = NULL;
    CHECK_STATUS(cudnnGetMultiHeadAttnWeights(h, d, (cudnnMultiHeadAttnWeightKind_t)8, wbytes, base, w, &addr),
                 CUDNN_STATUS_BAD_PARAM);
    if (wbytes > 0)
        CHECK_STATUS(cudnnGetMultiHeadAttnWeights(h, d, CUDNN_MH_ATTN_Q_WEIGHTS, wbytes - 1, base, w, &addr),
                     CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetMultiHeadAttnWeights(h, d, CUDNN_MH_ATTN_Q_WEIGHTS, wbytes, base, w, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetMultiHeadAttnBuffers(h, d, NULL, &ws, &rs), CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyTensorDescriptor(w);
    cudnnDestroyAttnDescriptor(d);
}

TEST(attn_weight_layout)
{
    cudnnHandle_t h = test_handle();
    struct attn_cfg c = base_cfg;
    check_layout(h, &c);
    c.mode = 0; /* no biases */
    check_layout(h, &c);
    c.mode = CUDNN_ATTN_ENABLE_PROJ_BIASES, c.dtype = CUDNN_DATA_HALF, c.qp = c.kp = 0, c.k = c.q, c.op = 0;
    check_layout(h, &c);
    c.dtype = CUDNN_DATA_DOUBLE, c.comp = CUDNN_DATA_DOUBLE, c.vp = 0, c.op = 3;
    check_layout(h, &c);
    /* never set */
    cudnnAttnDescriptor_t d;
    size_t a, b;
    if (!CHECK_OK(cudnnCreateAttnDescriptor(&d))) return;
    CHECK_STATUS(cudnnGetMultiHeadAttnBuffers(h, d, &a, &b, NULL), CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyAttnDescriptor(d);
}
