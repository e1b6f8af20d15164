/* rnn_desc.c: tests of the RNN descriptor API: every setter/getter round trip (v8, legacy v6,
   math type, bias mode, clipping, projection, padding mode, persistent plans, dynamic build,
   algorithm descriptors), RNN data descriptors in the three layouts with their padding fill,
   invalid arguments (the documented status, nothing written), and the weight layout.

   The layout is checked against offsets computed here, independently of the library, by walking
   the weight space in the order cuDNN 8.2 lays it out: the matrices of every pseudo-layer
   (layer * dirs + dir), in linear-layer ID order (the input matrices of the gates, the recurrent
   ones, then an LSTM's projection, ID 8), then the biases of every pseudo-layer in ID order;
   the first layer's input matrices are absent under SKIP input, the bias mode chooses the bias
   sets. Every cell, one and two directions, one and three layers, both input modes, every bias
   mode, LSTM projection, half/float/double; the legacy getters must give the same addresses as
   cudnnGetRNNWeightParams and 3-D filters of the same dims. Two more tests replay what PyTorch
   and MXNet assume of the layout (docs/compatibility.md). */
#include "test.h"

#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- descriptors ------------------------------------------------------------------------------ */

struct v8 {
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t cell;
    cudnnRNNBiasMode_t bias;
    cudnnDirectionMode_t dir;
    cudnnRNNInputMode_t input_mode;
    cudnnDataType_t dtype, prec;
    cudnnMathType_t math;
    int32_t input, hidden, proj, layers;
    cudnnDropoutDescriptor_t dropout;
    uint32_t aux;
};

static cudnnStatus_t set_v8(cudnnRNNDescriptor_t d, const struct v8 *s)
{
    return cudnnSetRNNDescriptor_v8(d, s->algo, s->cell, s->bias, s->dir, s->input_mode, s->dtype, s->prec, s->math,
                                    s->input, s->hidden, s->proj, s->layers, s->dropout, s->aux);
}

static bool get_v8(cudnnRNNDescriptor_t d, struct v8 *g)
{
    return CHECK_OK(cudnnGetRNNDescriptor_v8(d, &g->algo, &g->cell, &g->bias, &g->dir, &g->input_mode, &g->dtype,
                                             &g->prec, &g->math, &g->input, &g->hidden, &g->proj, &g->layers,
                                             &g->dropout, &g->aux));
}

static bool same_v8(const struct v8 *a, const struct v8 *b)
{
    return a->algo == b->algo && a->cell == b->cell && a->bias == b->bias && a->dir == b->dir &&
           a->input_mode == b->input_mode && a->dtype == b->dtype && a->prec == b->prec && a->math == b->math &&
           a->input == b->input && a->hidden == b->hidden && a->proj == b->proj && a->layers == b->layers &&
           a->dropout == b->dropout && a->aux == b->aux;
}

static const struct v8 base_v8 = {CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
                                  CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH,
                                  12, 16, 16, 2, NULL, 0};

/* Sets s, expects the status, and then the descriptor to read back `want`. */
static void expect_set(cudnnRNNDescriptor_t d, const struct v8 *s, cudnnStatus_t status, const struct v8 *want)
{
    struct v8 got;
    if (!CHECK_STATUS(set_v8(d, s), status)) return;
    if (get_v8(d, &got) && !CHECK(same_v8(&got, want)))
        FAIL("after Set_v8 (cell %d algo %d dtype %d prec %d input %d hidden %d proj %d layers %d aux %u)",
             (int)s->cell, (int)s->algo, (int)s->dtype, (int)s->prec, s->input, s->hidden, s->proj, s->layers,
             s->aux);
}

/* cudnnSetRNNDescriptor_v8 stores every field (cuDNN 8.2); invalid values are BAD_PARAM (a
   projection of a persistent algorithm NOT_SUPPORTED) and leave the descriptor as it was. */
TEST_ONCE(rnn_descriptor_v8_round_trip_and_bad_input)
{
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t d;
    cudnnDropoutDescriptor_t drop;
    if (!CHECK_OK(cudnnCreateRNNDescriptor(&d)) || !CHECK_OK(cudnnCreateDropoutDescriptor(&drop))) return;
    size_t states_bytes;
    CHECK_OK(cudnnDropoutGetStatesSize(h, &states_bytes));
    void *states = tbuf_alloc(states_bytes);
    CHECK_OK(cudnnSetDropoutDescriptor(drop, h, 0.25f, states, states_bytes, 7));

    struct v8 s = base_v8;
    expect_set(d, &s, CUDNN_STATUS_SUCCESS, &s);
    struct v8 all[] = {
        {CUDNN_RNN_ALGO_PERSIST_STATIC, CUDNN_GRU, CUDNN_RNN_SINGLE_INP_BIAS, CUDNN_BIDIRECTIONAL, CUDNN_SKIP_INPUT,
         CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, 32, 32, 32, 3, drop, CUDNN_RNN_PADDED_IO_ENABLED},
        {CUDNN_RNN_ALGO_PERSIST_DYNAMIC, CUDNN_RNN_RELU, CUDNN_RNN_SINGLE_REC_BIAS, CUDNN_UNIDIRECTIONAL,
         CUDNN_LINEAR_INPUT, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_FMA_MATH, 3, 5, 5, 1, NULL, 0},
        {CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H, CUDNN_RNN_TANH, CUDNN_RNN_NO_BIAS, CUDNN_BIDIRECTIONAL,
         CUDNN_LINEAR_INPUT, CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, 1, 1, 1, 9,
         drop, 0},
        {CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
         CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, 20, 16, 4, 2, drop, 0},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) expect_set(d, &all[i], CUDNN_STATUS_SUCCESS, &all[i]);

    /* each invalid field alone: BAD_PARAM (or NOT_SUPPORTED), the last valid setting kept */
    const struct v8 *kept = &all[3];
    struct v8 b;
#define BAD(field, value, status)                                                                        \
    do {                                                                                                 \
        b = base_v8;                                                                                     \
        b.field = value;                                                                                 \
        expect_set(d, &b, status, kept);                                                                 \
    } while (0)
    BAD(algo, (cudnnRNNAlgo_t)4, CUDNN_STATUS_BAD_PARAM);
    BAD(cell, (cudnnRNNMode_t)4, CUDNN_STATUS_BAD_PARAM);
    BAD(bias, (cudnnRNNBiasMode_t)4, CUDNN_STATUS_BAD_PARAM);
    BAD(dir, (cudnnDirectionMode_t)2, CUDNN_STATUS_BAD_PARAM);
    BAD(input_mode, (cudnnRNNInputMode_t)2, CUDNN_STATUS_BAD_PARAM);
    BAD(dtype, CUDNN_DATA_INT8, CUDNN_STATUS_BAD_PARAM);
    BAD(prec, CUDNN_DATA_HALF, CUDNN_STATUS_BAD_PARAM);   /* float data, half math */
    BAD(prec, CUDNN_DATA_DOUBLE, CUDNN_STATUS_BAD_PARAM);
    BAD(math, (cudnnMathType_t)7, CUDNN_STATUS_BAD_PARAM);
    BAD(input, 0, CUDNN_STATUS_BAD_PARAM);
    BAD(hidden, -1, CUDNN_STATUS_BAD_PARAM);
    BAD(layers, 0, CUDNN_STATUS_BAD_PARAM);
    BAD(proj, 0, CUDNN_STATUS_BAD_PARAM);
    BAD(proj, 17, CUDNN_STATUS_BAD_PARAM);                /* above hiddenSize */
    BAD(input_mode, CUDNN_SKIP_INPUT, CUDNN_STATUS_BAD_PARAM); /* inputSize 12 != hiddenSize 16 */
    BAD(aux, 2u, CUDNN_STATUS_BAD_PARAM);
    BAD(dropout, (cudnnDropoutDescriptor_t)d, CUDNN_STATUS_BAD_PARAM); /* not a dropout descriptor */
    b = base_v8, b.proj = 8, b.cell = CUDNN_GRU;          /* a projection is an LSTM feature */
    expect_set(d, &b, CUDNN_STATUS_BAD_PARAM, kept);
    b = base_v8, b.proj = 8, b.algo = CUDNN_RNN_ALGO_PERSIST_STATIC; /* ... of the standard algorithm */
    expect_set(d, &b, CUDNN_STATUS_NOT_SUPPORTED, kept);
#undef BAD
    CHECK_STATUS(set_v8(NULL, &base_v8), CUDNN_STATUS_BAD_PARAM);

    /* the getter: a NULL output is not written, the others are (TensorFlow asks for some only) */
    struct v8 g;
    memset(&g, 0x5a, sizeof g);
    CHECK_OK(cudnnGetRNNDescriptor_v8(d, &g.algo, &g.cell, NULL, &g.dir, &g.input_mode, NULL, &g.prec, NULL, NULL,
                                      &g.hidden, NULL, &g.layers, &g.dropout, NULL));
    CHECK(g.hidden == kept->hidden && g.layers == kept->layers && g.cell == kept->cell && g.input == 0x5a5a5a5a);

    CHECK_OK(cudnnDestroyRNNDescriptor(d));
    CHECK_STATUS(cudnnSetRNNMatrixMathType(d, CUDNN_DEFAULT_MATH), CUDNN_STATUS_BAD_PARAM); /* destroyed */
    CHECK_OK(cudnnDestroyDropoutDescriptor(drop));
    tbuf_free(states);
}

/* The legacy setter takes what PyTorch and TensorFlow pass (their handle, a dropout descriptor)
   and resets what it does not name: double bias, default math, no projection, no padded IO. */
TEST_ONCE(rnn_descriptor_v6_round_trip)
{
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t d;
    cudnnDropoutDescriptor_t drop;
    if (!CHECK_OK(cudnnCreateRNNDescriptor(&d)) || !CHECK_OK(cudnnCreateDropoutDescriptor(&drop))) return;
    CHECK_OK(cudnnSetDropoutDescriptor(drop, h, 0.0f, NULL, 0, 0));
    struct v8 s = base_v8;
    s.bias = CUDNN_RNN_NO_BIAS, s.math = CUDNN_TENSOR_OP_MATH, s.proj = 4, s.aux = CUDNN_RNN_PADDED_IO_ENABLED;
    CHECK_OK(set_v8(d, &s));
    CHECK_OK(cudnnSetRNNDescriptor_v6(h, d, 24, 3, drop, CUDNN_SKIP_INPUT, CUDNN_BIDIRECTIONAL, CUDNN_GRU,
                                      CUDNN_RNN_ALGO_PERSIST_STATIC, CUDNN_DATA_HALF));
    int hidden, layers;
    cudnnDropoutDescriptor_t gd;
    cudnnRNNInputMode_t im;
    cudnnDirectionMode_t dm;
    cudnnRNNMode_t cm;
    cudnnRNNAlgo_t al;
    cudnnDataType_t mp;
    CHECK_OK(cudnnGetRNNDescriptor_v6(h, d, &hidden, &layers, &gd, &im, &dm, &cm, &al, &mp));
    CHECK(hidden == 24 && layers == 3 && gd == drop && im == CUDNN_SKIP_INPUT && dm == CUDNN_BIDIRECTIONAL &&
          cm == CUDNN_GRU && al == CUDNN_RNN_ALGO_PERSIST_STATIC && mp == CUDNN_DATA_HALF);
    struct v8 g;
    if (get_v8(d, &g))
        CHECK(g.bias == CUDNN_RNN_DOUBLE_BIAS && g.math == CUDNN_DEFAULT_MATH && g.proj == 24 && g.aux == 0 &&
              g.hidden == 24 && g.prec == CUDNN_DATA_HALF);
    unsigned pad = 9;
    CHECK_OK(cudnnGetRNNPaddingMode(d, &pad));
    CHECK(pad == CUDNN_RNN_PADDED_IO_DISABLED);

    /* bad input: nothing changes */
    CHECK_STATUS(cudnnSetRNNDescriptor_v6(h, d, 0, 3, drop, CUDNN_LINEAR_INPUT, CUDNN_UNIDIRECTIONAL, CUDNN_LSTM,
                                          CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNDescriptor_v6(h, d, 8, 3, drop, CUDNN_LINEAR_INPUT, CUDNN_UNIDIRECTIONAL, CUDNN_LSTM,
                                          CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_INT32),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNDescriptor_v6(NULL, d, 8, 3, drop, CUDNN_LINEAR_INPUT, CUDNN_UNIDIRECTIONAL, CUDNN_LSTM,
                                          CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnGetRNNDescriptor_v6(h, d, &hidden, &layers, &gd, &im, &dm, &cm, &al, &mp));
    CHECK(hidden == 24 && cm == CUDNN_GRU && mp == CUDNN_DATA_HALF);
    hidden = -3;
    CHECK_STATUS(cudnnGetRNNDescriptor_v6(h, d, &hidden, &layers, &gd, &im, &dm, &cm, NULL, &mp),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK(hidden == -3);
    CHECK_OK(cudnnDestroyRNNDescriptor(d));
    CHECK_OK(cudnnDestroyDropoutDescriptor(drop));
}

/* Math type, bias mode, padding mode, clipping (both forms), projection: round trips, and
   invalid values refused with the setting kept. */
TEST_ONCE(rnn_descriptor_settings)
{
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t d;
    if (!CHECK_OK(cudnnCreateRNNDescriptor(&d))) return;
    /* projection layers need a set descriptor */
    CHECK_STATUS(cudnnSetRNNProjectionLayers(h, d, 4, 0), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(set_v8(d, &base_v8));

    cudnnMathType_t mt;
    CHECK_OK(cudnnSetRNNMatrixMathType(d, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
    CHECK_STATUS(cudnnSetRNNMatrixMathType(d, (cudnnMathType_t)9), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnGetRNNMatrixMathType(d, &mt));
    CHECK(mt == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
    CHECK_STATUS(cudnnGetRNNMatrixMathType(d, NULL), CUDNN_STATUS_BAD_PARAM);

    cudnnRNNBiasMode_t bm;
    CHECK_OK(cudnnSetRNNBiasMode(d, CUDNN_RNN_SINGLE_REC_BIAS));
    CHECK_STATUS(cudnnSetRNNBiasMode(d, (cudnnRNNBiasMode_t)-1), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnGetRNNBiasMode(d, &bm));
    CHECK(bm == CUDNN_RNN_SINGLE_REC_BIAS);

    unsigned pad;
    CHECK_OK(cudnnSetRNNPaddingMode(d, CUDNN_RNN_PADDED_IO_ENABLED));
    CHECK_STATUS(cudnnSetRNNPaddingMode(d, 2), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnGetRNNPaddingMode(d, &pad));
    CHECK(pad == CUDNN_RNN_PADDED_IO_ENABLED);
    struct v8 g;
    if (get_v8(d, &g)) CHECK(g.aux == CUDNN_RNN_PADDED_IO_ENABLED && g.bias == CUDNN_RNN_SINGLE_REC_BIAS);

    cudnnRNNClipMode_t cm;
    cudnnNanPropagation_t cn;
    double lo, hi;
    CHECK_OK(cudnnRNNGetClip_v8(d, &cm, &cn, &lo, &hi));
    CHECK(cm == CUDNN_RNN_CLIP_NONE);
    CHECK_OK(cudnnRNNSetClip_v8(d, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, -2.5, 3.0));
    CHECK_STATUS(cudnnRNNSetClip_v8(d, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, 1.0, -1.0), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnRNNSetClip_v8(d, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, NAN, 1.0), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnRNNSetClip_v8(d, (cudnnRNNClipMode_t)2, CUDNN_PROPAGATE_NAN, 0, 1), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnRNNSetClip(h, d, CUDNN_RNN_CLIP_MINMAX, (cudnnNanPropagation_t)2, 0, 1), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnRNNSetClip(NULL, d, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, 0, 1), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnRNNGetClip(h, d, &cm, &cn, &lo, &hi));
    CHECK(cm == CUDNN_RNN_CLIP_MINMAX && cn == CUDNN_PROPAGATE_NAN && lo == -2.5 && hi == 3.0);
    CHECK_OK(cudnnRNNSetClip(h, d, CUDNN_RNN_CLIP_NONE, CUDNN_NOT_PROPAGATE_NAN, -1, 1));
    CHECK_OK(cudnnRNNGetClip_v8(d, &cm, &cn, &lo, &hi));
    CHECK(cm == CUDNN_RNN_CLIP_NONE && cn == CUDNN_NOT_PROPAGATE_NAN && lo == -1 && hi == 1);
    lo = 77;
    CHECK_STATUS(cudnnRNNGetClip_v8(d, &cm, &cn, &lo, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK(lo == 77);

    int rp = -1, op = -1;
    CHECK_OK(cudnnSetRNNProjectionLayers(h, d, 5, 0));
    CHECK_STATUS(cudnnSetRNNProjectionLayers(h, d, 17, 0), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNProjectionLayers(h, d, 0, 0), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNProjectionLayers(h, d, 8, 4), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_OK(cudnnGetRNNProjectionLayers(h, d, &rp, &op));
    CHECK(rp == 5 && op == 0);
    if (get_v8(d, &g)) CHECK(g.proj == 5);
    struct v8 gru = base_v8;
    gru.cell = CUDNN_GRU;
    CHECK_OK(set_v8(d, &gru));
    CHECK_STATUS(cudnnSetRNNProjectionLayers(h, d, 8, 0), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetRNNProjectionLayers(h, d, 16, 0)); /* = hidden: no projection, any cell */
    CHECK_OK(cudnnDestroyRNNDescriptor(d));
}

/* Persistent plans and cudnnBuildRNNDynamic are for PERSIST_DYNAMIC; cudnnSetRNNAlgorithmDescriptor
   takes the RNN algorithm of an algorithm descriptor. */
TEST_ONCE(rnn_descriptor_algorithms_and_plans)
{
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t d;
    if (!CHECK_OK(cudnnCreateRNNDescriptor(&d))) return;
    cudnnPersistentRNNPlan_t plan = NULL;
    CHECK_STATUS(cudnnCreatePersistentRNNPlan(d, 8, CUDNN_DATA_FLOAT, &plan), CUDNN_STATUS_BAD_PARAM); /* unset */
    CHECK_OK(set_v8(d, &base_v8));
    CHECK_STATUS(cudnnCreatePersistentRNNPlan(d, 8, CUDNN_DATA_FLOAT, &plan), CUDNN_STATUS_NOT_SUPPORTED);
    CHECK(plan == NULL);
    CHECK_OK(cudnnBuildRNNDynamic(h, d, 8)); /* nothing to build for STANDARD */
    CHECK_STATUS(cudnnBuildRNNDynamic(h, d, 0), CUDNN_STATUS_BAD_PARAM);

    cudnnAlgorithmDescriptor_t ad;
    CHECK_OK(cudnnCreateAlgorithmDescriptor(&ad));
    cudnnAlgorithm_t a = {{.RNNAlgo = CUDNN_RNN_ALGO_PERSIST_DYNAMIC}};
    CHECK_OK(cudnnSetAlgorithmDescriptor(ad, a));
    CHECK_OK(cudnnSetRNNAlgorithmDescriptor(h, d, ad));
    struct v8 g;
    if (get_v8(d, &g)) CHECK(g.algo == CUDNN_RNN_ALGO_PERSIST_DYNAMIC);
    a.algo.RNNAlgo = (cudnnRNNAlgo_t)11;
    CHECK_OK(cudnnSetAlgorithmDescriptor(ad, a));
    CHECK_STATUS(cudnnSetRNNAlgorithmDescriptor(h, d, ad), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNAlgorithmDescriptor(h, d, (cudnnAlgorithmDescriptor_t)d), CUDNN_STATUS_BAD_PARAM);
    if (get_v8(d, &g)) CHECK(g.algo == CUDNN_RNN_ALGO_PERSIST_DYNAMIC);
    CHECK_OK(cudnnDestroyAlgorithmDescriptor(ad));

    CHECK_OK(cudnnBuildRNNDynamic(h, d, 8));
    CHECK_STATUS(cudnnCreatePersistentRNNPlan(d, 0, CUDNN_DATA_FLOAT, &plan), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnCreatePersistentRNNPlan(d, 8, CUDNN_DATA_INT8, &plan), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnCreatePersistentRNNPlan(d, 8, CUDNN_DATA_FLOAT, NULL), CUDNN_STATUS_BAD_PARAM);
    if (CHECK_OK(cudnnCreatePersistentRNNPlan(d, 8, CUDNN_DATA_FLOAT, &plan))) {
        CHECK_OK(cudnnSetPersistentRNNPlan(d, plan));
        CHECK_STATUS(cudnnSetPersistentRNNPlan(d, (cudnnPersistentRNNPlan_t)d), CUDNN_STATUS_BAD_PARAM);
        CHECK_OK(cudnnDestroyPersistentRNNPlan(plan));
        CHECK_STATUS(cudnnSetPersistentRNNPlan(d, plan), CUDNN_STATUS_BAD_PARAM); /* destroyed */
    }
    CHECK_OK(cudnnDestroyPersistentRNNPlan(NULL));
    CHECK_OK(cudnnDestroyRNNDescriptor(d));
}

/* RNN data descriptors: every layout and type round trips with its lengths and fill; invalid
   input is BAD_PARAM with the descriptor as it was; the getter writes what was asked for. */
TEST_ONCE(rnn_data_descriptor)
{
    cudnnRNNDataDescriptor_t d;
    if (!CHECK_OK(cudnnCreateRNNDataDescriptor(&d))) return;
    static const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT,
                                            CUDNN_DATA_DOUBLE};
    static const cudnnRNNDataLayout_t layouts[] = {CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                                   CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                                   CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED};
    const int lengths[5] = {7, 7, 4, 1, 0};
    for (size_t t = 0; t < 4; t++)
        for (size_t l = 0; l < 3; l++) {
            unsigned char fill[8] = {0}, got_fill[16];
            tstore(types[t], fill, 0, -1.5);
            bool with_fill = l != 1;
            if (!CHECK_OK(cudnnSetRNNDataDescriptor(d, types[t], layouts[l], 7, 5, 33, lengths,
                                                    with_fill ? fill : NULL)))
                continue;
            cudnnDataType_t dt;
            cudnnRNNDataLayout_t lay;
            int ms, bs, vs, got[6] = {-9, -9, -9, -9, -9, -9};
            memset(got_fill, 0x77, sizeof got_fill);
            CHECK_OK(cudnnGetRNNDataDescriptor(d, &dt, &lay, &ms, &bs, &vs, 6, got, got_fill));
            CHECK(dt == types[t] && lay == layouts[l] && ms == 7 && bs == 5 && vs == 33);
            CHECK(memcmp(got, lengths, sizeof lengths) == 0 && got[5] == -9);
            CHECK(tload(types[t], got_fill, 0) == (with_fill ? -1.5 : 0.0));
            CHECK(got_fill[tdtype_size(types[t])] == 0x77);
            got[0] = got[1] = got[2] = -9;
            CHECK_OK(cudnnGetRNNDataDescriptor(d, &dt, &lay, &ms, &bs, &vs, 2, got, NULL));
            CHECK(got[0] == 7 && got[1] == 7 && got[2] == -9);
        }

    /* bad input; the last setting (double, batch major) stays */
    const int unsorted[3] = {2, 5, 1}, too_long[3] = {2, 9, 1}, negative[3] = {2, -1, 1};
    CHECK_OK(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_DOUBLE, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 6, 3, 4,
                                       unsorted, NULL)); /* unpacked: any order */
    CHECK_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 6, 3, 4,
                                           unsorted, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 6, 3, 4,
                                           too_long, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 6, 3, 4,
                                           negative, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 6, 3, 4,
                                           NULL, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_INT8, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 6, 3, 4,
                                           unsorted, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, (cudnnRNNDataLayout_t)3, 6, 3, 4, unsorted, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 0, 3, 4,
                                           unsorted, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 6, 0, 4,
                                           unsorted, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 6, 3, 0,
                                           unsorted, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetRNNDataDescriptor(NULL, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 6, 3, 4,
                                           unsorted, NULL),
                 CUDNN_STATUS_BAD_PARAM);
    cudnnDataType_t dt = (cudnnDataType_t)-1;
    cudnnRNNDataLayout_t lay;
    int ms, bs, vs, got[3];
    CHECK_STATUS(cudnnGetRNNDataDescriptor(d, &dt, &lay, &ms, &bs, NULL, 3, got, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNDataDescriptor(d, &dt, &lay, &ms, &bs, &vs, -1, got, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNDataDescriptor(d, &dt, &lay, &ms, &bs, &vs, 3, NULL, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK(dt == (cudnnDataType_t)-1);
    CHECK_OK(cudnnGetRNNDataDescriptor(d, &dt, &lay, &ms, &bs, &vs, 3, got, NULL));
    CHECK(dt == CUDNN_DATA_DOUBLE && lay == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED && ms == 6 && bs == 3 &&
          vs == 4 && memcmp(got, unsorted, sizeof got) == 0);
    CHECK_OK(cudnnDestroyRNNDataDescriptor(d));
    CHECK_STATUS(cudnnGetRNNDataDescriptor(d, &dt, &lay, &ms, &bs, &vs, 3, got, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyRNNDataDescriptor(NULL));
}

/* ---- the weight layout --------------------------------------------------------------------- */

/* One matrix or bias as the documented layout places it; rows == 0 when absent. */
struct expected {
    int64_t offset;
    int rows, cols;
};

#define MAX_PSEUDO 6
#define MAX_ID 9

struct layout {
    struct expected m[MAX_PSEUDO][MAX_ID], b[MAX_PSEUDO][MAX_ID];
    int64_t total;
};

/* Walks the weight space in order (see the file comment) and records where each piece lands. */
static void expected_layout(const struct v8 *s, struct layout *l)
{
    memset(l, 0, sizeof *l);
    int gates = s->cell == CUDNN_LSTM ? 4 : s->cell == CUDNN_GRU ? 3 : 1;
    int dirs = s->dir == CUDNN_BIDIRECTIONAL ? 2 : 1;
    bool projection = s->cell == CUDNN_LSTM && s->proj < s->hidden;
    int64_t at = 0;
    for (int layer = 0; layer < s->layers; layer++)
        for (int dir = 0; dir < dirs; dir++) {
            struct expected *m = l->m[layer * dirs + dir];
            int in = layer == 0 ? s->input : s->proj * dirs;
            for (int gate = 0; gate < gates; gate++) {
                if (layer == 0 && s->input_mode == CUDNN_SKIP_INPUT) continue;
                m[gate] = (struct expected){at, s->hidden, in};
                at += (int64_t)s->hidden * in;
            }
            for (int gate = 0; gate < gates; gate++) {
                m[gates + gate] = (struct expected){at, s->hidden, s->proj};
                at += (int64_t)s->hidden * s->proj;
            }
            if (projection) {
                m[8] = (struct expected){at, s->proj, s->hidden};
                at += (int64_t)s->proj * s->hidden;
            }
        }
    bool inp = s->bias == CUDNN_RNN_DOUBLE_BIAS || s->bias == CUDNN_RNN_SINGLE_INP_BIAS;
    bool rec = s->bias == CUDNN_RNN_DOUBLE_BIAS || s->bias == CUDNN_RNN_SINGLE_REC_BIAS;
    for (int q = 0; q < s->layers * dirs; q++)
        for (int id = 0; id < 2 * gates; id++)
            if (id < gates ? inp : rec) {
                l->b[q][id] = (struct expected){at, s->hidden, 1};
                at += s->hidden;
            }
    l->total = at;
}

/* A 3-D tensor {1, rows, cols} packed, or 0 dims for an absent piece. */
static bool tensor_is(cudnnTensorDescriptor_t t, cudnnDataType_t dtype, const struct expected *e)
{
    cudnnDataType_t dt;
    int nb, dims[3], strides[3];
    if (!CHECK_OK(cudnnGetTensorNdDescriptor(t, 3, &dt, &nb, dims, strides))) return false;
    if (e->rows == 0) return nb == 0;
    return dt == dtype && nb == 3 && dims[0] == 1 && dims[1] == e->rows && dims[2] == e->cols &&
           strides[0] == e->rows * e->cols && strides[1] == e->cols && strides[2] == 1;
}

static bool filter_is(cudnnFilterDescriptor_t f, cudnnDataType_t dtype, const struct expected *e)
{
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    int nb, dims[3];
    if (!CHECK_OK(cudnnGetFilterNdDescriptor(f, 3, &dt, &fmt, &nb, dims))) return false;
    if (e->rows == 0) return nb == 0;
    return dt == dtype && nb == 3 && dims[0] == 1 && dims[1] == e->rows && dims[2] == e->cols;
}

struct weight_objects {
    cudnnRNNDescriptor_t rnn, legacy;
    cudnnTensorDescriptor_t m, b, x;
    cudnnFilterDescriptor_t w, f;
};

/* Checks one configuration: the sizes, every v8 matrix and bias, and the legacy getters (on a
   descriptor set the legacy way) at the same places. */
static void check_config(cudnnHandle_t h, struct weight_objects *o, const struct v8 *s)
{
    char what[160];
    snprintf(what, sizeof what, "cell %d dirs %d layers %d input mode %d bias %d proj %d/%d dtype %s", (int)s->cell,
             (int)s->dir + 1, s->layers, (int)s->input_mode, (int)s->bias, s->proj, s->hidden,
             tdtype_name(s->dtype));
    if (!CHECK_OK(set_v8(o->rnn, s))) {
        FAIL("%s", what);
        return;
    }
    struct layout l;
    expected_layout(s, &l);
    size_t es = tdtype_size(s->dtype), bytes = 0;
    CHECK_OK(cudnnGetRNNWeightSpaceSize(h, o->rnn, &bytes));
    if (!CHECK(bytes == (size_t)l.total * es)) {
        FAIL("%s: %zu bytes, want %lld", what, bytes, (long long)l.total * (long long)es);
        return;
    }
    char *space = malloc(bytes);
    int gates = s->cell == CUDNN_LSTM ? 4 : s->cell == CUDNN_GRU ? 3 : 1;
    int dirs = s->dir + 1, ids = s->cell == CUDNN_LSTM ? 9 : 2 * gates;

    /* the legacy descriptor: v6, then the bias mode and the projection */
    CHECK_OK(cudnnSetRNNDescriptor_v6(h, o->legacy, s->hidden, s->layers, NULL, s->input_mode, s->dir, s->cell,
                                      s->algo, s->prec));
    CHECK_OK(cudnnSetRNNBiasMode(o->legacy, s->bias));
    CHECK_OK(cudnnSetRNNProjectionLayers(h, o->legacy, s->proj, 0));
    CHECK_OK(cudnnSetTensorNdDescriptor(o->x, s->dtype, 3, (int[]){4, s->input, 1}, (int[]){s->input, 1, 1}));
    size_t legacy_bytes = 0;
    CHECK_OK(cudnnGetRNNParamsSize(h, o->legacy, o->x, &legacy_bytes, s->dtype));
    CHECK(legacy_bytes == bytes);
    CHECK_OK(cudnnSetFilterNdDescriptor(o->w, s->dtype, CUDNN_TENSOR_NCHW, 3, (int[]){(int)l.total, 1, 1}));

    for (int q = 0; q < s->layers * dirs; q++)
        for (int id = 0; id < ids; id++) {
            if (s->cell == CUDNN_LSTM && id == 2 * gates) id = 8;
            void *ma = (void *)1, *ba = (void *)1, *lm = (void *)1, *lb = (void *)1;
            if (!CHECK_OK(cudnnGetRNNWeightParams(h, o->rnn, q, bytes, space, id, o->m, &ma, o->b, &ba))) continue;
            const struct expected *em = &l.m[q][id], *eb = &l.b[q][id];
            bool ok = CHECK(tensor_is(o->m, s->dtype, em)) && CHECK(tensor_is(o->b, s->dtype, eb));
            ok = ok && CHECK(ma == (em->rows ? space + em->offset * es : NULL));
            ok = ok && CHECK(ba == (eb->rows ? space + eb->offset * es : NULL));
            ok = ok && CHECK_OK(cudnnGetRNNLinLayerMatrixParams(h, o->legacy, q, o->x, o->w, space, id, o->f, &lm));
            ok = ok && CHECK(lm == ma) && CHECK(filter_is(o->f, s->dtype, em));
            ok = ok && CHECK_OK(cudnnGetRNNLinLayerBiasParams(h, o->legacy, q, o->x, o->w, space, id, o->f, &lb));
            ok = ok && CHECK(lb == ba) && CHECK(filter_is(o->f, s->dtype, eb));
            if (!ok) {
                FAIL("%s: pseudo-layer %d linLayerID %d", what, q, id);
                free(space);
                return;
            }
        }
    free(space);
}

TEST_ONCE(rnn_weight_layout_every_configuration)
{
    cudnnHandle_t h = test_handle();
    struct weight_objects o;
    CHECK_OK(cudnnCreateRNNDescriptor(&o.rnn));
    CHECK_OK(cudnnCreateRNNDescriptor(&o.legacy));
    CHECK_OK(cudnnCreateTensorDescriptor(&o.m));
    CHECK_OK(cudnnCreateTensorDescriptor(&o.b));
    CHECK_OK(cudnnCreateTensorDescriptor(&o.x));
    CHECK_OK(cudnnCreateFilterDescriptor(&o.w));
    CHECK_OK(cudnnCreateFilterDescriptor(&o.f));
    static const cudnnRNNMode_t cells[] = {CUDNN_RNN_RELU, CUDNN_RNN_TANH, CUDNN_LSTM, CUDNN_GRU};
    static const cudnnRNNBiasMode_t biases[] = {CUDNN_RNN_NO_BIAS, CUDNN_RNN_SINGLE_INP_BIAS,
                                                CUDNN_RNN_SINGLE_REC_BIAS, CUDNN_RNN_DOUBLE_BIAS};
    static const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE};
    for (int c = 0; c < 4; c++)
        for (int dir = 0; dir < 2; dir++)
            for (int layers = 1; layers <= 3; layers += 2)
                for (int skip = 0; skip < 2; skip++)
                    for (int bias = 0; bias < 4; bias++)
                        for (int proj = 0; proj < (cells[c] == CUDNN_LSTM ? 2 : 1); proj++)
                            for (int t = 0; t < 3; t++) {
                                struct v8 s = base_v8;
                                s.cell = cells[c];
                                s.dir = (cudnnDirectionMode_t)dir;
                                s.layers = layers;
                                s.input_mode = skip ? CUDNN_SKIP_INPUT : CUDNN_LINEAR_INPUT;
                                s.bias = biases[bias];
                                s.hidden = 7;
                                s.input = skip ? 7 : 5;
                                s.proj = proj ? 3 : 7;
                                s.dtype = s.prec = types[t];
                                check_config(h, &o, &s);
                                if (current_test_failed()) goto done;
                            }
done:
    cudnnDestroyRNNDescriptor(o.rnn);
    cudnnDestroyRNNDescriptor(o.legacy);
    cudnnDestroyTensorDescriptor(o.m);
    cudnnDestroyTensorDescriptor(o.b);
    cudnnDestroyTensorDescriptor(o.x);
    cudnnDestroyFilterDescriptor(o.w);
    cudnnDestroyFilterDescriptor(o.f);
}

/* Bad input of the weight queries: BAD_PARAM, nothing written. */
TEST_ONCE(rnn_weight_params_bad_input)
{
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t d;
    cudnnTensorDescriptor_t m, b, x;
    cudnnFilterDescriptor_t w, f;
    CHECK_OK(cudnnCreateRNNDescriptor(&d));
    CHECK_OK(cudnnCreateTensorDescriptor(&m));
    CHECK_OK(cudnnCreateTensorDescriptor(&b));
    CHECK_OK(cudnnCreateTensorDescriptor(&x));
    CHECK_OK(cudnnCreateFilterDescriptor(&w));
    CHECK_OK(cudnnCreateFilterDescriptor(&f));
    size_t bytes = 12345;
    CHECK_STATUS(cudnnGetRNNWeightSpaceSize(h, d, &bytes), CUDNN_STATUS_BAD_PARAM); /* never set */
    CHECK(bytes == 12345);
    CHECK_OK(set_v8(d, &base_v8)); /* LSTM, 2 layers, one direction */
    CHECK_OK(cudnnGetRNNWeightSpaceSize(h, d, &bytes));
    CHECK_STATUS(cudnnGetRNNWeightSpaceSize(NULL, d, &bytes), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNWeightSpaceSize(h, d, NULL), CUDNN_STATUS_BAD_PARAM);
    char *space = malloc(bytes);
    void *ma = (void *)1, *ba = (void *)1;
    CHECK_OK(cudnnSetTensor4dDescriptor(m, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4));
    CHECK_STATUS(cudnnGetRNNWeightParams(h, d, 2, bytes, space, 0, m, &ma, b, &ba), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNWeightParams(h, d, -1, bytes, space, 0, m, &ma, b, &ba), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNWeightParams(h, d, 0, bytes, space, 9, m, &ma, b, &ba), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNWeightParams(h, d, 0, bytes - 1, space, 0, m, &ma, b, &ba), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNWeightParams(h, d, 0, bytes, space, 0, m, NULL, b, &ba), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNWeightParams(h, d, 0, bytes, space, 0, (cudnnTensorDescriptor_t)w, &ma, b, &ba),
                 CUDNN_STATUS_BAD_PARAM);
    CHECK(ma == (void *)1 && ba == (void *)1);
    int nb = -1, dims[4], strides[4];
    cudnnDataType_t dt;
    CHECK_OK(cudnnGetTensorNdDescriptor(m, 4, &dt, &nb, dims, strides));
    CHECK(nb == 4 && dims[1] == 2); /* untouched */
    /* only the bias wanted: the matrix pair may be NULL */
    CHECK_OK(cudnnGetRNNWeightParams(h, d, 1, bytes, space, 5, NULL, NULL, b, &ba));
    CHECK(ba != (void *)1 && ma == (void *)1);
    /* weightSpace NULL (TensorFlow's projection region): the address is the offset */
    void *off = (void *)1;
    CHECK_OK(cudnnGetRNNWeightParams(h, d, 1, bytes, NULL, 5, NULL, NULL, b, &off));
    CHECK(off == (void *)(uintptr_t)((char *)ba - space));
    /* a GRU has IDs 0..5 only */
    struct v8 gru = base_v8;
    gru.cell = CUDNN_GRU;
    CHECK_OK(set_v8(d, &gru));
    CHECK_STATUS(cudnnGetRNNWeightParams(h, d, 0, bytes, space, 6, m, &ma, b, &ba), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNWeightParams(h, d, 0, bytes, space, 8, m, &ma, b, &ba), CUDNN_STATUS_BAD_PARAM);

    /* legacy: xDesc, wDesc too small or of another type, the output filter */
    CHECK_OK(cudnnSetRNNDescriptor_v6(h, d, 16, 2, NULL, CUDNN_LINEAR_INPUT, CUDNN_UNIDIRECTIONAL, CUDNN_LSTM,
                                      CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
    CHECK_OK(cudnnSetTensorNdDescriptor(x, CUDNN_DATA_FLOAT, 3, (int[]){4, 12, 1}, (int[]){12, 1, 1}));
    size_t legacy = 0;
    CHECK_OK(cudnnGetRNNParamsSize(h, d, x, &legacy, CUDNN_DATA_FLOAT));
    CHECK(legacy == bytes);
    CHECK_STATUS(cudnnGetRNNParamsSize(h, d, x, &legacy, CUDNN_DATA_INT8), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNParamsSize(h, d, NULL, &legacy, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    int n = (int)(bytes / 4);
    void *lm = (void *)1;
    CHECK_OK(cudnnSetFilterNdDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, (int[]){n - 1, 1, 1}));
    CHECK_STATUS(cudnnGetRNNLinLayerMatrixParams(h, d, 0, x, w, space, 0, f, &lm), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetFilterNdDescriptor(w, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW, 3, (int[]){n, 1, 1}));
    CHECK_STATUS(cudnnGetRNNLinLayerMatrixParams(h, d, 0, x, w, space, 0, f, &lm), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnSetFilterNdDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, (int[]){n, 1, 1}));
    CHECK_STATUS(cudnnGetRNNLinLayerMatrixParams(h, d, 0, x, w, space, 0, NULL, &lm), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNLinLayerBiasParams(h, d, 0, x, w, space, 0, f, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnGetRNNLinLayerBiasParams(h, d, 0, x, w, space, 9, f, &lm), CUDNN_STATUS_BAD_PARAM);
    CHECK(lm == (void *)1);
    /* ID 8 without a projection: absent, a NULL address and 0 dims */
    CHECK_OK(cudnnGetRNNLinLayerMatrixParams(h, d, 0, x, w, space, 8, f, &lm));
    CHECK(lm == NULL);
    CHECK_OK(cudnnGetRNNLinLayerMatrixParams(h, d, 1, x, w, space, 3, f, &lm));
    CHECK(lm == space + (4 * 16 * 12 + 4 * 16 * 16 + 3 * 16 * 16) * 4);
    /* w NULL (TensorFlow's regions): the address is the offset in bytes */
    CHECK_OK(cudnnGetRNNLinLayerMatrixParams(h, d, 1, x, w, NULL, 3, f, &lm));
    CHECK(lm == (void *)(uintptr_t)((4 * 16 * 12 + 4 * 16 * 16 + 3 * 16 * 16) * 4));
    /* SKIP input: the legacy input width must be the hidden size */
    CHECK_OK(cudnnSetRNNDescriptor_v6(h, d, 16, 2, NULL, CUDNN_SKIP_INPUT, CUDNN_UNIDIRECTIONAL, CUDNN_LSTM,
                                      CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
    CHECK_STATUS(cudnnGetRNNParamsSize(h, d, x, &legacy, CUDNN_DATA_FLOAT), CUDNN_STATUS_BAD_PARAM);
    free(space);
    cudnnDestroyRNNDescriptor(d);
    cudnnDestroyTensorDescriptor(m);
    cudnnDestroyTensorDescriptor(b);
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyFilterDescriptor(f);
}

/* ---- what frameworks assume of the layout ---------------------------------------------------- */

/* PyTorch (aten/src/ATen/native/cudnn/RNN.cpp, get_parameters on the legacy path): the v6
   setter with its handle and a dropout descriptor, the math type, the projection; the size from
   cudnnGetRNNParamsSize with a {batch, input, 1} xDesc; then, per pseudo-layer, the matrices and
   then the biases of IDs 0 .. 7 through a {numel, 1, 1} filter, each filter of at most 3 dims,
   each ID but the first of its set (0 and 4) starting where the one before it ends (PyTorch's
   "cur_offset" assertion: a layer's gate matrices are one tensor), and the projection (ID 8)
   last. */
TEST_ONCE(rnn_weights_pytorch_get_parameters)
{
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t d;
    cudnnDropoutDescriptor_t drop;
    cudnnTensorDescriptor_t x;
    cudnnFilterDescriptor_t w, f;
    CHECK_OK(cudnnCreateRNNDescriptor(&d));
    CHECK_OK(cudnnCreateDropoutDescriptor(&drop));
    CHECK_OK(cudnnCreateTensorDescriptor(&x));
    CHECK_OK(cudnnCreateFilterDescriptor(&w));
    CHECK_OK(cudnnCreateFilterDescriptor(&f));
    CHECK_OK(cudnnSetDropoutDescriptor(drop, h, 0.0f, NULL, 0, 0));
    for (int proj = 0; proj < 2; proj++) {
        const int H = 6, P = proj ? 4 : H, I = 5, L = 2, D = 2;
        CHECK_OK(cudnnSetRNNDescriptor_v6(h, d, H, L, drop, CUDNN_LINEAR_INPUT, CUDNN_BIDIRECTIONAL, CUDNN_LSTM,
                                          CUDNN_RNN_ALGO_STANDARD, CUDNN_DATA_FLOAT));
        CHECK_OK(cudnnSetRNNMatrixMathType(d, CUDNN_DEFAULT_MATH));
        if (proj) CHECK_OK(cudnnSetRNNProjectionLayers(h, d, P, 0));
        CHECK_OK(cudnnSetTensorNdDescriptor(x, CUDNN_DATA_FLOAT, 3, (int[]){3, I, 1}, (int[]){I, 1, 1}));
        size_t bytes = 0;
        if (!CHECK_OK(cudnnGetRNNParamsSize(h, d, x, &bytes, CUDNN_DATA_FLOAT))) break;
        int numel = (int)(bytes / sizeof(float));
        float *buf = malloc(bytes);
        CHECK_OK(cudnnSetFilterNdDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, (int[]){numel, 1, 1}));
        int64_t cur = 0, seen = 0;
        for (int layer = 0; layer < L * D; layer++) {
            for (int bias = 0; bias < 2; bias++)
                for (int id = 0; id < 8; id++) {
                    void *ptr = NULL;
                    cudnnStatus_t s = bias ? cudnnGetRNNLinLayerBiasParams(h, d, layer, x, w, buf, id, f, &ptr)
                                           : cudnnGetRNNLinLayerMatrixParams(h, d, layer, x, w, buf, id, f, &ptr);
                    cudnnDataType_t dt;
                    cudnnTensorFormat_t fmt;
                    int nb = 0, dims[3] = {0, 0, 0};
                    if (!CHECK_OK(s) || !CHECK_OK(cudnnGetFilterNdDescriptor(f, 3, &dt, &fmt, &nb, dims)) ||
                        !CHECK(nb <= 3 && ptr != NULL))
                        goto next;
                    int64_t offset = (float *)ptr - buf, n = (int64_t)dims[0] * dims[1] * dims[2];
                    if (id != 0 && id != 4 && !CHECK(offset == cur)) FAIL("layer %d id %d bias %d", layer, id, bias);
                    cur = offset + n;
                    seen += n;
                }
            if (proj) {
                void *ptr = NULL;
                cudnnDataType_t dt;
                cudnnTensorFormat_t fmt;
                int nb = 0, dims[3] = {0, 0, 0};
                CHECK_OK(cudnnGetRNNLinLayerMatrixParams(h, d, layer, x, w, buf, 8, f, &ptr));
                CHECK_OK(cudnnGetFilterNdDescriptor(f, 3, &dt, &fmt, &nb, dims));
                CHECK(ptr != NULL && nb == 3 && dims[1] == P && dims[2] == H);
                seen += (int64_t)P * H;
            }
        }
        CHECK(seen == numel); /* every element belongs to one parameter */
    next:
        free(buf);
    }
    cudnnDestroyRNNDescriptor(d);
    cudnnDestroyDropoutDescriptor(drop);
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyFilterDescriptor(f);
}

/* MXNet (src/operator/rnn-inl.h, rnn_impl.h) hands cuDNN its fused parameter blob unchanged and
   reads the same blob on the CPU as: per pseudo-layer, the input matrices of the gates (G * H x
   in) then the recurrent ones (G * H x H), all pseudo-layers in a row; the biases last
   (b_ptr = w + size - bias size), per pseudo-layer the input set then the recurrent set. A
   model trained on one runs on the other only if the getters agree. */
TEST_ONCE(rnn_weights_mxnet_fused_blob)
{
    cudnnHandle_t h = test_handle();
    cudnnRNNDescriptor_t d;
    cudnnTensorDescriptor_t m, b;
    CHECK_OK(cudnnCreateRNNDescriptor(&d));
    CHECK_OK(cudnnCreateTensorDescriptor(&m));
    CHECK_OK(cudnnCreateTensorDescriptor(&b));
    static const cudnnRNNMode_t cells[] = {CUDNN_RNN_RELU, CUDNN_LSTM, CUDNN_GRU};
    for (int c = 0; c < 3; c++) {
        const int H = 5, I = 3, L = 3, D = 2, G = cells[c] == CUDNN_LSTM ? 4 : cells[c] == CUDNN_GRU ? 3 : 1;
        struct v8 s = base_v8;
        s.cell = cells[c], s.dir = CUDNN_BIDIRECTIONAL, s.input = I, s.hidden = s.proj = H, s.layers = L;
        CHECK_OK(set_v8(d, &s));
        size_t bytes = 0;
        CHECK_OK(cudnnGetRNNWeightSpaceSize(h, d, &bytes));
        float *blob = malloc(bytes);
        int64_t size = (int64_t)(bytes / sizeof(float)), bias_size = (int64_t)L * D * 2 * G * H;
        float *w_ptr = blob, *b_ptr = blob + size - bias_size;
        for (int layer = 0; layer < L; layer++)
            for (int dir = 0; dir < D; dir++) {
                int in = layer ? H * D : I, q = layer * D + dir;
                for (int gate = 0; gate < G; gate++) {
                    void *wx, *wh, *bx, *bh;
                    CHECK_OK(cudnnGetRNNWeightParams(h, d, q, bytes, blob, gate, m, &wx, b, &bx));
                    CHECK_OK(cudnnGetRNNWeightParams(h, d, q, bytes, blob, G + gate, m, &wh, b, &bh));
                    if (!CHECK(wx == w_ptr + gate * H * in && wh == w_ptr + G * H * in + gate * H * H &&
                               bx == b_ptr + gate * H && bh == b_ptr + G * H + gate * H))
                        FAIL("cell %d pseudo-layer %d gate %d", (int)cells[c], q, gate);
                }
                w_ptr += (int64_t)(in + H) * G * H;
                b_ptr += 2 * G * H;
            }
        CHECK(w_ptr == blob + size - bias_size && b_ptr == blob + size);
        free(blob);
    }
    cudnnDestroyRNNDescriptor(d);
    cudnnDestroyTensorDescriptor(m);
    cudnnDestroyTensorDescriptor(b);
}
